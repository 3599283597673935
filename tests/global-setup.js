// Probes for a Docker engine once per jest run; workers read the verdict from the environment. Names the
// run, for what the e2e suites share within it (the sample data loaded once: tests/support/stack.ts).
module.exports = async function globalSetup() {
  process.env.QUARRY_E2E_RUN = process.env.QUARRY_E2E_RUN || `${process.pid}-${Date.now().toString(36)}`;
  if (process.env.QUARRY_DOCKER_AVAILABLE) return;
  try {
    const { getContainerRuntimeClient } = require('testcontainers');
    let timer;
    await Promise.race([
      getContainerRuntimeClient().finally(() => clearTimeout(timer)),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('probe timed out after 10 s')), 10000);
      }),
    ]);
    process.env.QUARRY_DOCKER_AVAILABLE = '1';
    process.env.QUARRY_DOCKER_REASON = 'a Docker engine answered';
  } catch (err) {
    process.env.QUARRY_DOCKER_AVAILABLE = '0';
    process.env.QUARRY_DOCKER_REASON = String((err && err.message) || err).split('\n')[0];
  }
};
