import { createServer } from 'node:net';
import { AppError } from '../errors.js';

/**
 * What to do when the HTTP server cannot listen, in one line: `serve` checks its ports before it
 * opens the database and loads the model (seconds to half a minute), and says the same if the
 * port is taken between that check and the real listen.
 */
export function listenFailure(error: Error, port: number, host: string, setting: string): Error {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EADDRINUSE':
      return new AppError(
        'unavailable',
        `port ${port} on ${host} is already in use (another agent-memory serve?): stop that process, ` +
          `or set ${setting} to a free port, e.g. ${setting}=${port === 65535 ? port - 1 : port + 1}`,
      );
    case 'EACCES':
      return new AppError(
        'unavailable',
        `port ${port} on ${host} needs privileges this process does not have: set ${setting} to a port from 1024 up`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new AppError(
        'unavailable',
        `HOST ${host} is not an address of this machine: set HOST to 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)`,
      );
    default:
      return error;
  }
}

/** Resolves once `port` on `host` is shown free by listening on it for a moment; else rejects with the line. */
export async function assertPortFree(port: number, host: string, setting: string): Promise<void> {
  // Port 0 asks the system for any free port: nothing to check.
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(listenFailure(error, port, host, setting)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
