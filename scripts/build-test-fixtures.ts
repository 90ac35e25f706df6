/**
 * Writes `test/fixtures/describe-instance-types.json`: `DescribeInstanceTypes` entries for the instance types the
 * adapter tests use, derived at build time from the reference data (`../shared/data`, a build-time input, never read at
 * run time) by `test/support/ec2-instance-type-fixtures.ts`,
 * so the tests run in a clone without the reference folder.
 * Run: `npx tsx scripts/build-test-fixtures.ts`.
 */
import { writeFileSync } from 'node:fs';
import { FIXTURE_FILE, FIXTURE_TYPES, referenceDescribeInstanceType } from '../test/support/ec2-instance-type-fixtures.js';

const entries = Object.fromEntries(FIXTURE_TYPES.map((name) => [name, referenceDescribeInstanceType(name)]));
writeFileSync(FIXTURE_FILE, `${JSON.stringify(entries, null, 1)}\n`);
console.log(`wrote ${FIXTURE_TYPES.length} DescribeInstanceTypes entries to ${FIXTURE_FILE.pathname}`);
