// Starting and stopping `strata serve` for the node tests (STRATA_BIN: the
// strata executable; CTest sets it).
import { spawn } from 'node:child_process';
import net from 'node:net';

export const BIN = process.env.STRATA_BIN || 'strata';

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

// Spawns `strata serve --port P ...args` and waits until /healthz answers.
export async function startServer(args, env = {}) {
  const port = await freePort();
  const proc = spawn(BIN, ['serve', '--port', String(port), ...args],
                     { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; process.stderr.write(d); });
  const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; ++i) {
    if (proc.exitCode !== null) break;
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) return { proc, port, url, exited, stderr: () => stderr };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, port, url, exited, stderr: () => stderr, failed: true };
}

// SIGTERM, then the exit code.
export async function stopServer(s) {
  if (s.proc.exitCode !== null) return s.proc.exitCode;
  s.proc.kill('SIGTERM');
  return s.exited;
}
