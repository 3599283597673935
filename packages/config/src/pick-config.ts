import type { Config } from './load-config';

/**
 * The settings a module reads, under their names in Config: a module's config is this selection plus
 * what it derives, so its type follows Config's instead of copying it.
 */
export function pickConfig<K extends keyof Config>(config: Config, ...keys: K[]): Pick<Config, K> {
  const picked: Partial<Pick<Config, K>> = {};
  for (const key of keys) picked[key] = config[key];
  return picked as Pick<Config, K>;
}
