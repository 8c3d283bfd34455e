import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got, as it came: the raw body is what a signature is checked against. */
export interface Received {
  at: number;
  headers: Record<string, string>;
  raw: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
}

export interface Receiver {
  url: string;
  received: Received[];
  /** What the next requests are answered: a status, or 'hang' to answer never. */
  answer: number | 'hang';
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A webhook receiver on loopback, recording every request. */
export async function startReceiver(answer: number | 'hang' = 204): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received,
    answer,
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} requests, not ${count}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Received['body'];
      try {
        body = JSON.parse(raw) as Received['body'];
      } catch {
        // Not a delivery (a probe of another test's process that found this port, say): it is
        // answered and not recorded, where a throw here would leave it unanswered and uncaught.
        res.writeHead(400, { 'content-type': 'text/plain' }).end('not a webhook delivery');
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ at: Date.now(), headers, raw, body });
      if (receiver.answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(receiver.answer, { 'content-type': 'text/plain' });
      res.end(receiver.answer < 300 ? '' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}
