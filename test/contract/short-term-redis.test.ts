import { after } from 'node:test';
import { Redis } from 'ioredis';
import { RedisKeys } from '../../src/adapters/redis/keys.js';
import { RedisShortTermStore } from '../../src/adapters/redis/short-term.js';
import { startRedis } from '../helpers/redis.js';
import { shortTermContract } from './short-term.contract.js';

const redis = await startRedis();
after(() => redis.stop());
shortTermContract('redis', async (o) => new RedisShortTermStore(new Redis(redis.url), new RedisKeys('nc'), { ...o, ownsConnection: true }));
