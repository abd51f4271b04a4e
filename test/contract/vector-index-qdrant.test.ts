import { after, before } from 'node:test';
import pino from 'pino';
import { QdrantVectorIndex } from '../../src/adapters/qdrant/vector-index.js';
import { startFakeQdrant, type FakeQdrant } from '../helpers/fake-qdrant.js';
import { vectorIndexContract } from './vector-index.contract.js';

let fake: FakeQdrant;
before(async () => {
  fake = await startFakeQdrant();
});
after(() => fake.stop());

vectorIndexContract('qdrant adapter, against a fake Qdrant HTTP server implementing the REST subset we use', () =>
  QdrantVectorIndex.connect({ url: fake.url, log: pino({ level: 'silent' }) }),
);
