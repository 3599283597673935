import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { describeWithDocker } from '@quarry/testkit';
import { searchIndexConformance } from '../search-index.conformance';
import { TypesenseSearchIndex } from './typesense-search-index.adapter';
import { toFilterBy } from './typesense-filter';

describeWithDocker('TypesenseSearchIndex conformance (testcontainers typesense/typesense:28.0)', () => {
  let container: StartedTestContainer;

  beforeAll(async () => {
    container = await new GenericContainer('typesense/typesense:28.0')
      .withCommand(['--data-dir', '/tmp', '--api-key', 'conformance-key'])
      .withExposedPorts(8108)
      .withWaitStrategy(Wait.forHttp('/health', 8108))
      .start();
  }, 180000);

  afterAll(async () => {
    await container?.stop();
  });

  searchIndexConformance(async (engine) => new TypesenseSearchIndex({ url: `http://${container.getHost()}:${container.getMappedPort(8108)}`, apiKey: 'conformance-key' }, engine));
});

describe('Typesense filter translation', () => {
  const slots = new Map([
    ['name', { name: 'name', type: 'string', slot: 0 }],
    ['score', { name: 'score', type: 'integer', slot: 1 }],
  ]);

  it('pushes NOT down to leaves, keeping records without a value', () => {
    expect(toFilterBy({ kind: 'not', child: { kind: 'compare', field: 'score', fieldType: 'integer', op: 'gt', value: { type: 'number', value: 5 } } }, slots)).toBe(
      '(h1:=false || v1:<=5)',
    );
  });

  it('matches words and phrases on stored word lists', () => {
    expect(toFilterBy({ kind: 'match', fields: ['name'], words: ['ada'], prefix: false }, slots)).toBe('(w0:=[`ada`])');
    expect(toFilterBy({ kind: 'match', fields: ['name'], words: ['new', 'york', 'ci'], prefix: true }, slots)).toBe('((b0:=[`new_york`] && b0:`york_ci`*))');
  });
});
