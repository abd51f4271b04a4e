import pino from 'pino';
import { InProcessQueue } from '../../src/adapters/in-process/queue.js';
import { runJobQueueContract } from './job-queue.contract.js';

runJobQueueContract('in-process', async (o) => new InProcessQueue(pino({ level: 'silent' }), o));
