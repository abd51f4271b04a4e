// One process of the concurrent-migration test: migrates the database named on the command line and
// prints the versions it applied.
import { migrate } from '../../../src/adapters/postgres/migrations.js';
import { Postgres } from '../../../src/adapters/postgres/pool.js';

const pg = new Postgres({ url: process.argv[2]!, max: 1 });
try {
  process.stdout.write(JSON.stringify(await migrate(pg)));
} finally {
  await pg.close();
}
