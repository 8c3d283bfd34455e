import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Actor, Core } from '../domain/core.js';
import { liveKeyIds } from '../domain/tenancy/keys.js';
import { UnavailableError } from '../errors.js';
import { createMcpServer } from './server.js';

/** One MCP session of /mcp: a server for one key (and X-Agent-Id), kept between requests. */
export interface McpSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
  readonly actor: Actor;
  /** The X-Agent-Id of the initialize request; later requests must carry the same (or none). */
  readonly agentId: string | undefined;
  /** performance.now() of the last request, or of the end of the last GET stream. */
  lastSeen: number;
  /** Open GET streams (the SDK keeps one at most): a session with one is waiting, not idle. */
  streams: number;
}

export interface McpSessionLimits {
  /** The most sessions this process keeps at once. */
  readonly max: number;
  /** A session without a request or an open stream for this long is closed. */
  readonly idleMs: number;
}

/**
 * The sessions of /mcp in this process. A session lives in the memory of the process that opened
 * it: another replica answers its id with 404, and the client must initialize again there
 * (docs/mcp.md, Sessions). Bounded: at the limit, the session idle longest without a stream is
 * closed to make room; when every session holds a stream, a new one is refused with 503.
 */
export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly core: Core,
    private readonly limits: McpSessionLimits,
  ) {
    // Checked at a fraction of the idle time, at most once a minute: a session outlives its idle
    // time by at most that much.
    const every = Math.max(1_000, Math.min(60_000, Math.floor(limits.idleMs / 4)));
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The session with this id opened by this key, or undefined (another key's session is not shown). */
  find(id: string, actor: Actor): McpSession | undefined {
    const session = this.sessions.get(id);
    return session && session.actor.keyId === actor.keyId && session.actor.tenantId === actor.tenantId
      ? session
      : undefined;
  }

  /**
   * A new session for this caller, whose transport answers the initialize request given to it next;
   * it is registered once the transport has made its id.
   */
  open(actor: Actor, agentId: string | undefined): McpSession {
    if (this.closed) throw new UnavailableError('the server is shutting down', 5);
    if (this.sessions.size >= this.limits.max) this.makeRoom();
    const server = createMcpServer(this.core, { actor, agentId }, { subscriptions: true });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      enableJsonResponse: true,
      // Called once the initialize request is read, after `session` below is assigned.
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    const session: McpSession = { transport, server, actor, agentId, lastSeen: performance.now(), streams: 0 };
    transport.onclose = () => {
      if (transport.sessionId !== undefined && this.sessions.get(transport.sessionId) === session) {
        this.sessions.delete(transport.sessionId);
      }
    };
    return session;
  }

  /** Closes one session: its server (and so its subscriptions) and its streams. */
  async close(session: McpSession, reason: string): Promise<void> {
    const id = session.transport.sessionId;
    if (id !== undefined) this.sessions.delete(id);
    this.core.log.info({ reason, streams: session.streams }, 'mcp session closed');
    await session.server.close().catch((error: unknown) => this.core.log.warn({ err: error }, 'mcp close failed'));
  }

  /** Closes every session, at shutdown: an open GET stream would otherwise hold the HTTP server open. */
  async closeAll(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.all([...this.sessions.values()].map((s) => this.close(s, 'shutdown')));
  }

  private makeRoom(): void {
    let oldest: McpSession | undefined;
    for (const session of this.sessions.values()) {
      if (session.streams === 0 && (!oldest || session.lastSeen < oldest.lastSeen)) oldest = session;
    }
    if (!oldest) {
      throw new UnavailableError(
        `this server holds its limit of ${this.limits.max} MCP sessions (MCP_MAX_SESSIONS), each with an open stream; ` +
          'retry later, or send requests without initialize (without a session)',
        30,
      );
    }
    void this.close(oldest, 'session limit');
  }

  /** Closes idle sessions, and those whose key has been revoked since (their open stream included). */
  async sweep(): Promise<void> {
    const now = performance.now();
    for (const session of [...this.sessions.values()]) {
      if (session.streams === 0 && now - session.lastSeen > this.limits.idleMs) await this.close(session, 'idle');
    }
    const keyed = [...this.sessions.values()].filter((s) => s.actor.keyId !== null);
    if (keyed.length === 0) return;
    try {
      const valid = await liveKeyIds(
        this.core.db,
        keyed.map((s) => s.actor),
      );
      for (const session of [...this.sessions.values()]) {
        if (session.actor.keyId !== null && !valid.has(session.actor.keyId)) await this.close(session, 'key revoked');
      }
    } catch (error) {
      this.core.log.warn({ err: error }, 'mcp session key check failed');
    }
  }
}
