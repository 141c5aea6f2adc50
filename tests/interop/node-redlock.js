// SPDX-License-Identifier: MIT
// node-redlock (npm redlock + ioredis, as bench/node/package-lock.json pins
// them; NODE_PATH=bench/node/node_modules), one step per run, for
// tests/interop.bats:
//
//   node-redlock.js acquire SOCK KEY TTL_MS   prints the lock's value; exit 1 if busy
//   node-redlock.js release SOCK KEY VALUE    exit 0 released, 3 not the owner
//
// One attempt each (retryCount 0): a refusal is an answer, not a wait.
"use strict";

const Redis = require("ioredis");
const { default: Redlock, Lock, ExecutionError } = require("redlock");

async function main(argv) {
	const [action, sock, key, arg] = argv;
	const client = new Redis({ path: sock, maxRetriesPerRequest: 1 });
	const redlock = new Redlock([client], { retryCount: 0 });
	try {
		if (action === "acquire") {
			try {
				const lock = await redlock.acquire([key], Number(arg));
				process.stdout.write(lock.value + "\n");
				return 0;
			} catch (e) {
				if (e instanceof ExecutionError)
					return 1;
				throw e;
			}
		}
		if (action === "release") {
			const lock = new Lock(redlock, [key], arg, [], Date.now() + 1000);
			try {
				await lock.release();
				return 0;
			} catch (e) {
				if (e instanceof ExecutionError)
					return 3;
				throw e;
			}
		}
		process.stderr.write(`node-redlock.js: unknown action ${action}\n`);
		return 64;
	} finally {
		client.disconnect();
	}
}

main(process.argv.slice(2)).then((rc) => { process.exitCode = rc; },
    (e) => { process.stderr.write(`node-redlock.js: ${e}\n`); process.exitCode = 70; });
