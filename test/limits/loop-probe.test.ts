// The test helper behind the "stayed responsive and bounded" checks (test/helpers/probed-server.ts): the probe
// loaded into the real server answers each sample with plausible figures, and samples are numbered so an
// answer is never mistaken for the previous one.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProbedServer, openFdCount, type ProbedServer } from '../helpers/probed-server.js';
import { callTool } from '../helpers/rpc.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let srv: ProbedServer;
beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'x\n' });
  srv = await startProbedServer({ workspace: ws.dir });
});
afterAll(async () => {
  await srv.stop();
  ws.cleanup();
});

it('reports delay, peak RSS and descriptors of the server process, since the previous sample', async () => {
  await srv.sample();
  expect((await callTool(srv.url, 'server_info', {})).isError).toBe(false);
  const s = await srv.sample();
  expect(s.maxDelayMs).toBeGreaterThanOrEqual(0);
  expect(s.maxRssBytes).toBeGreaterThan(10 * 1024 * 1024);
  expect(s.maxFds).toBeGreaterThan(3);
  expect(openFdCount(srv.pid)).toBeGreaterThan(3);
  const again = await srv.sample();
  expect(again.maxRssBytes).toBeGreaterThan(0);
});

it('counts a stall spent working (300 ms of CPU on the loop), however busy the machine is', async () => {
  await srv.sample();
  process.kill(srv.pid, 'SIGUSR1');
  // The stall is over once the server answers again.
  expect((await callTool(srv.url, 'server_info', {})).isError).toBe(false);
  const s = await srv.sample();
  expect(s.maxDelayMs).toBeGreaterThanOrEqual(250);
});
