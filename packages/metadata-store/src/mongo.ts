// The production adapter's entry point (`@quarry/metadata-store/mongo`); see sqlite.ts.
export { MongoMetadataStore } from './adapters/mongo-metadata-store.adapter';
