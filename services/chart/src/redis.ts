// The private Redis server's entry point (`@quarry/chart/redis`): the composition root starts the queue's
// Redis through a subpath that names it; `@quarry/chart` itself exports no adapter.
export { startPrivateRedis, type PrivateRedis, type PrivateRedisOptions } from './adapters/private-redis';
