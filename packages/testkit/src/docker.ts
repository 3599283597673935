/**
 * Whether a Docker engine answers, decided once per jest run by the global setup (tests/global-setup.js)
 * and handed to the workers through the environment, so suites can choose describe or describe.skip
 * synchronously and print why.
 */
export function dockerAvailability(): { available: boolean; reason: string } {
  const available = process.env.QUARRY_DOCKER_AVAILABLE === '1';
  return { available, reason: process.env.QUARRY_DOCKER_REASON ?? 'the Docker probe did not run' };
}

/**
 * describe() when `runs`; otherwise describe.skip with the reason printed, so no suite is ever skipped
 * silently. Every conditional suite goes through here.
 */
export function describeIf(runs: boolean, skipReason: string, name: string, fn: () => void): void {
  if (runs) {
    describe(name, fn);
    return;
  }
  // Straight to stderr: jest drops the console output of a file whose tests are all skipped.
  process.stderr.write(`SKIPPED "${name}": ${skipReason}\n`);
  describe.skip(name, fn);
}

/** describe() where a Docker engine answers; elsewhere skipped with the reason printed. */
export function describeWithDocker(name: string, fn: () => void): void {
  const { available, reason } = dockerAvailability();
  describeIf(available, `no Docker engine answers (${reason}); testcontainers cannot start its server here.`, name, fn);
}
