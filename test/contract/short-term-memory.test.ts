import { InProcessShortTermStore } from '../../src/adapters/in-process/short-term.js';
import { shortTermContract } from './short-term.contract.js';

shortTermContract('in-process', async (o) => new InProcessShortTermStore(o));
