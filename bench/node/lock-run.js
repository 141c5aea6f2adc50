#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// bench/node/lock-run.js: the node-redlock peer of redlock-cli's benchmarks
// (bench/run.sh).  It does what a Node user of the npm package `redlock`
// (with `ioredis`) writes to guard a command: take the lock, run the
// command, release the lock.
//
//   node lock-run.js [-u URL]... [-t TTL_MS] [-n] [--using] KEY -- CMD [ARG...]
//   node lock-run.js [-u URL]... --bench N --sets 1,3,5 KEY
//
// -u URL      a Redis server (repeat for a Redlock quorum); default
//             $REDIS_URL.
// -t TTL_MS   lock duration in milliseconds (default 30000).
// -n          do not wait: one attempt (retryCount 0); exit 1 if busy.
//             Without -n it waits for ever (retryCount -1), polling every
//             retryDelay 200 ms ± retryJitter 100 ms, the library's defaults.
// --using     hold the lock with redlock.using(), the only API of node-redlock
//             that renews (extends) the lock while the command runs; the
//             command then runs with the asynchronous child_process.spawn.
//             Without it: acquire(), child_process.spawnSync(), release(),
//             and the lock is NOT renewed: it expires after TTL_MS even if
//             the command still runs (spawnSync also blocks the event loop,
//             so no timer could renew it).
// --bench N   no command: N timed acquire+release pairs in this process for
//             each set of servers in --sets (the first 1, 3, 5 URLs ...),
//             interleaved, order rotated every iteration, after N/10
//             warm-up pairs; prints "SET_SIZE MICROSECONDS" per pair.
//
// Exit status: the command's (128+n if it was killed by signal n), 1 if the
// lock was busy with -n, 70 on any other error.
"use strict";

const { spawn, spawnSync } = require("child_process");
const Redis = require("ioredis");
const Redlock = require("redlock").default;

function usage(msg) {
	process.stderr.write(`lock-run.js: ${msg}\n`);
	process.exit(70);
}

const urls = [];
let ttl = 30000;
let noWait = false;
let using = false;
let bench = 0;
let sets = [1];
let key;
let argv = process.argv.slice(2);
while (argv.length > 0) {
	const a = argv.shift();
	if (a === "-u") urls.push(argv.shift());
	else if (a === "-t") ttl = parseInt(argv.shift(), 10);
	else if (a === "-n") noWait = true;
	else if (a === "--using") using = true;
	else if (a === "--bench") bench = parseInt(argv.shift(), 10);
	else if (a === "--sets") sets = argv.shift().split(",").map(Number);
	else if (a === "--") break;
	else if (key === undefined && !a.startsWith("-")) key = a;
	else usage(`unexpected argument '${a}'`);
}
if (urls.length === 0 && process.env.REDIS_URL) urls.push(process.env.REDIS_URL);
if (urls.length === 0) usage("no server: give -u URL or $REDIS_URL");
if (key === undefined) usage("no KEY");
if (!(ttl > 0)) usage("bad -t");
if (!bench && argv.length === 0) usage("no command after --");
if (bench && sets.some((k) => !(k >= 1 && k <= urls.length)))
	usage("--sets needs as many -u URLs as its largest set");

// One ioredis client per server, as the node-redlock README shows.
const clients = urls.map((u) => new Redis(u, { maxRetriesPerRequest: 1 }));
// The library's defaults (retryDelay 200 ms, retryJitter 100 ms), except
// that a waiting caller waits for ever: retryCount -1 for the acquisition
// only.  Lock.release() and Lock.extend() use the instance's settings, and
// with retryCount -1 there a release of a lock that expired and was taken by
// another client would retry for ever; so the instance keeps retryCount 0.
const redlock = new Redlock(clients, { retryCount: 0 });
const waitSettings = { retryCount: noWait ? 0 : -1 };
// Errors of single attempts ("resource locked") are normal while waiting.
redlock.on("error", () => {});

function close() {
	for (const c of clients) c.disconnect();
}

function exitStatus(r) {
	if (r.error) {
		process.stderr.write(`lock-run.js: ${r.error.message}\n`);
		return 70;
	}
	if (r.signal) return 128 + (require("os").constants.signals[r.signal] || 0);
	return r.status;
}

async function acquire(lockers) {
	try {
		return await lockers.acquire([key], ttl, waitSettings);
	} catch (e) {
		if (noWait && e.name === "ExecutionError") {
			close();
			process.exit(1);
		}
		throw e;
	}
}

// Release once (the instance's retryCount 0): a lock that expired (no
// renewal) and was taken by another client cannot be released.
async function release(lock) {
	try {
		await lock.release();
		return true;
	} catch (e) {
		process.stderr.write(
		    `lock-run.js: release failed (lock expired or taken over): ${e.message}\n`);
		return false;
	}
}

async function runPlain() {
	const lock = await acquire(redlock);
	const r = spawnSync(argv[0], argv.slice(1), { stdio: "inherit" });
	await release(lock);
	return exitStatus(r);
}

async function runUsing() {
	let status;
	try {
		// The settings apply to the acquisition; extensions (each time the
		// lock is within automaticExtensionThreshold, 500 ms, of its
		// expiry) and the release use the instance's.
		await redlock.using([key], ttl, waitSettings, async (signal) => {
			const child = spawn(argv[0], argv.slice(1), { stdio: "inherit" });
			signal.addEventListener("abort", () => {
				process.stderr.write("lock-run.js: lock lost, stopping the command\n");
				child.kill("SIGTERM");
			});
			status = await new Promise((resolve) => {
				child.on("error", (error) => resolve(exitStatus({ error })));
				child.on("exit", (code, sig) => resolve(exitStatus({ status: code, signal: sig })));
			});
		});
	} catch (e) {
		if (status !== undefined) return status;	// the release failed
		if (noWait && e.name === "ExecutionError") return 1;
		throw e;
	}
	return status;
}

async function runBench() {
	const lockers = sets.map((k) => {
		const r = new Redlock(clients.slice(0, k), { retryCount: 0 });
		r.on("error", () => {});
		return r;
	});
	const out = [];
	const warm = Math.ceil(bench / 10);
	for (let i = 0; i < warm + bench; i++) {
		for (let j = 0; j < lockers.length; j++) {
			const s = (i + j) % lockers.length;
			const t0 = process.hrtime.bigint();
			const lock = await lockers[s].acquire([`${key}:${sets[s]}`], ttl);
			await lockers[s].release(lock, { retryCount: 0 });
			const us = Number((process.hrtime.bigint() - t0) / 1000n);
			if (i >= warm) out.push(`${sets[s]} ${us}`);
		}
	}
	process.stdout.write(out.join("\n") + "\n");
	return 0;
}

(bench ? runBench() : using ? runUsing() : runPlain()).then(
	(status) => {
		close();
		process.exitCode = status;
	},
	(e) => {
		process.stderr.write(`lock-run.js: ${e.message}\n`);
		close();
		process.exitCode = 70;
	});
