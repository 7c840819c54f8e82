// What a tool is: one definition object per tool file. Handlers get validated arguments and a ToolContext
// and return an outcome; they never see HTTP, the protocol era or a token (architecture.md, style 2).
import type * as z from 'zod';
import type { Runtime } from '../runtime/runtime.js';
import type { Principal } from '../auth/principal.js';
import type { InputRequiredPayload } from '../runtime/grants.js';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ImageBlock {
  type: 'image';
  data: string;
  mimeType: string;
}

export interface ToolOutcome {
  /** The complete machine result (without `ok`, added by tools/result). */
  structured: Record<string, unknown>;
  /** One concise text block written for a model. */
  text: string;
  /** Extra content blocks after the text (view_image). */
  extra?: ImageBlock[];
}

/** What a call may ask of the client's user (decision 24); a handler never sees the era itself. */
export interface Consent {
  /** The client can ask its user: a 2026-07-28 request whose client declared the elicitation capability. */
  canAsk: boolean;
  /** On a retried call: the `requestState` and `inputResponses` it carries (unchecked). */
  requestState?: unknown;
  inputResponses?: unknown;
}

export interface ToolContext {
  runtime: Runtime;
  principal: Principal;
  /** Aborted when the server shuts down; never by a client's cancellation of a command. */
  signal: AbortSignal;
  consent?: Consent;
}

/** Thrown by a handler that needs the user's answer first; the dispatcher answers `input_required`. */
export class InputRequired extends Error {
  constructor(readonly payload: InputRequiredPayload) {
    super('input required');
  }
}

export interface ToolDef<I extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  /** Success shape, without `ok`. */
  output: z.ZodObject;
  annotations: ToolAnnotations;
  handler(args: z.output<I>, ctx: ToolContext): Promise<ToolOutcome> | ToolOutcome;
}

export function defineTool<I extends z.ZodObject>(def: ToolDef<I>): ToolDef<I> {
  return def;
}

/** Annotations for the read-only tools (the common case). */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
