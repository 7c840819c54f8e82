#!/bin/sh
# Thin wrapper (docs/remote-access.md#the-tunnel-command): publish the current directory through devtunnel.
#   scripts/tunnel-devtunnel.sh [--workspace DIR] [--auth-mode bearer|oauth] [--port N] [--name NAME]
# Same as `workbench-mcp tunnel devtunnel …`; builds the checkout first if needed. devtunnel must be on PATH.
set -e
repo=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
node "$repo/scripts/build-if-needed.mjs"
exec node "$repo/dist/cli/main.js" tunnel devtunnel "$@"
