/**
 * Whether a Docker engine answers, decided once per jest run by the global setup (tests/global-setup.js)
 * and handed to the workers through the environment, so suites can choose describe or describe.skip
 * synchronously and print why.
 */
export function dockerAvailability(): { available: boolean; reason: string } {
  const available = process.env.QUARRY_DOCKER_AVAILABLE === '1';
  return { available, reason: process.env.QUARRY_DOCKER_REASON ?? 'the Docker probe did not run' };
}

/** describe() where a Docker engine answers; elsewhere describe.skip with the reason printed once. */
export function describeWithDocker(name: string, fn: () => void): void {
  const { available, reason } = dockerAvailability();
  if (available) {
    describe(name, fn);
    return;
  }
  // eslint-disable-next-line no-console
  console.warn(`SKIPPED "${name}": no Docker engine answers (${reason}); testcontainers cannot start its server here.`);
  describe.skip(name, fn);
}
