import type { Logger } from '@quarry/logger';
import * as grpc from '@grpc/grpc-js';
import { bindGrpcServer, createGrpcServer, shutdownGrpcServer } from './grpc-server';

/** What every Quarry module offers the process that hosts it (mimir-style targets). */
export interface QuarryModule {
  readonly name: string;
  start(): Promise<void>;
  /** Finishes in-flight work within the grace period, then releases everything the module holds. */
  stop(): Promise<void>;
}

/** A module that serves one gRPC service; `address` is known once started (port 0 resolves then). */
export class GrpcServiceModule implements QuarryModule {
  private server: grpc.Server | undefined;
  private bound: string | undefined;

  constructor(
    readonly name: string,
    private readonly log: Logger,
    private readonly listenAddr: string,
    private readonly graceMs: number,
    private readonly register: (server: grpc.Server) => void,
    private readonly onStop: () => Promise<void> = async () => {},
  ) {}

  get address(): string {
    if (!this.bound) throw new Error(`${this.name} is not started`);
    return this.bound;
  }

  async start(): Promise<void> {
    const server = createGrpcServer();
    this.register(server);
    this.bound = await bindGrpcServer(server, this.listenAddr);
    this.server = server;
    this.log.info({ address: this.bound }, `${this.name} service listening`);
  }

  async stop(): Promise<void> {
    if (this.server) await shutdownGrpcServer(this.server, this.graceMs);
    this.server = undefined;
    await this.onStop();
  }
}
