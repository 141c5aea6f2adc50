# SPDX-License-Identifier: MIT
# The history checker of tests/stress/stress.sh: awk -f check.awk LOG
#
# Prints one summary line on stdout, details on stderr, and exits 1 when the
# history shows a violation, 0 when it shows none.  Works with any POSIX
# awk (mawk included).  All times are CLOCK_MONOTONIC ns since the run
# began, taken on one host, so they are comparable across processes.
#
# Log lines (written by child.c, worker.c and stress.sh):
#   config KEY VALUE ...                      workers, cycles, ttl_ms, servers, replicas
#   start <fence> <worker> <t> [pid [shape]]  a job's child entered its critical
#                                             section (shape: plain, pipe, bg)
#   end <fence> <worker> <t> <status> [term]  ... and left it
#   proc <fence> <worker> <t> <pid> <role>    another process of that job started
#                                             (role: sink of a pipe, bg left behind)
#   procend <fence> <worker> <t> <pid> <status> [term]   ... and is done
#   exit <worker> <rc> <t>                    the worker's redlock-cli exited and
#                                             every process of its job is confirmed dead
#   accept <fence> <in-lock|late>             the resource took a write
#   reject <fence> (last <f>) <in-lock|late>  the resource refused one
#   kill <worker> <stage> <t> [shape]         fault: SIGKILL of a redlock-cli
#   pause <server> <ms> <t>                   fault: SIGSTOP of a server for ms
#   delay <fence> <worker> <ms> <t>           fault: a write delayed ms "in the network"
#   replica-kill <server> <t>                 fault: SIGKILL of a server's replica
#   replica-restart <server> <t>              ... and its restart
#   checked <server>                          the leak check ran on a server
#   leaked <server> <key> <pttl>              ... and found the lock key there
#   note ...                                  information only
#
# What counts as an overlap.  Each `start` opens the critical section of
# one acquisition (worker, fence), and the section lasts until the job's
# last recorded process is gone.  When every process of the job (the
# child, and each `proc`) logged its end (`end`, `procend`), the section
# closes at the latest of them.  When one did not, it was SIGKILLed (by
# redlock-cli's guardian when redlock-cli was killed, or by run at the
# lock's expiry); the section then closes at the worker's next `exit`
# line, which the worker writes only after every process of the job is
# dead: a conservative end, never earlier than the last death.  A section
# with a process that has no end and started after that `exit` line (run
# let go of a job that still ran), or with no `exit` line, stays open to
# the end of time.  Two sections overlap when one starts strictly before
# the other ends; an overlap is counted once per section that starts while
# an earlier one is still open.  End lines are written after the protected
# writes, so a section contains its job's writes; a delayed write is not
# part of any section.
#
# Violations (exit 1): overlaps; stale writes accepted (an accept whose
# fence is below a fence accepted before it in log order: the resource
# checking itself; a holder may write its fence more than once); in-lock
# writes rejected (a holder's own write refused: a higher fence was
# written while it held the lock, which means an overlap or a fence that
# did not grow); fence order errors (sorted by
# start, fences must strictly grow: the contract's fencing guarantee);
# locks leaked (the lock key still present on a server after every process
# ended and a further TTL passed), or no leak check at all; malformed
# lines; an empty run; cycles whose command could not run (exit 126 or
# 127: a broken harness).  Delayed ("late") writes that are rejected are
# the fencing working, not a violation.

function num(s) { return s ~ /^-?[0-9]+$/ }
function bad(why) {
	malformed++
	if (malformed <= 5)
		printf "check: line %d: %s: %s\n", NR, why, $0 > "/dev/stderr"
}
function ms(ns) { return sprintf("%.3fms", ns / 1000000) }

BEGIN { inf = 1e300 }

$1 == "config" {
	for (i = 2; i < NF; i += 2)
		cfg[$i] = $(i + 1)
	next
}
# The other processes of a job are kept by (worker, fence): a pipeline's
# sink may log its `proc` before the child its `start`.
function ended(k, t) {
	nend[k]++
	if (!(k in lastend) || t > lastend[k]) lastend[k] = t
}
# open(k, fence, worker, t): the critical section of (worker, fence), from
# its first recorded process on.  A pipeline's sink may be that first one,
# and its job may be stopped before the child logs its `start` at all.
function open(k, f, w, t) {
	n++
	sec[k] = n; key[n] = k; fen[n] = f + 0; wk[n] = w; st[n] = t + 0
	en[n] = -1; shape[n] = "unstarted"
	if (!(k in laststart) || st[n] > laststart[k]) laststart[k] = st[n]
	cur[w] = n
}
$1 == "start" {
	if (NF < 4 || !num($2) || !num($3) || !num($4)) { bad("bad start"); next }
	k = $3 SUBSEP $2
	if (k in started) { dup++; bad("second start of one acquisition"); next }
	if (!(k in sec))
		open(k, $2, $3, $4)
	i = sec[k]; started[k] = 1; nproc[k]++
	if ($4 + 0 < st[i]) st[i] = $4 + 0
	if ($4 + 0 > laststart[k]) laststart[k] = $4 + 0
	shape[i] = NF >= 6 ? $6 : "plain"
	next
}
$1 == "end" {
	if (NF < 5 || !num($2) || !num($3) || !num($4)) { bad("bad end"); next }
	k = $3 SUBSEP $2
	if (!(k in sec)) { bad("end without start"); next }
	i = sec[k]
	if (i in mainend) { bad("second end"); next }
	mainend[i] = 1; ended(k, $4 + 0); status[$5]++
	if ($NF == "term") termed++
	completed++
	next
}
$1 == "proc" {
	if (NF < 6 || !num($2) || !num($3) || !num($4) || !num($5)) { bad("bad proc"); next }
	k = $3 SUBSEP $2
	if ((k SUBSEP $5) in procs) { bad("second proc"); next }
	if (!(k in sec))
		open(k, $2, $3, $4)
	procs[k SUBSEP $5] = NR; nproc[k]++; roles[$6]++
	if (!(k in laststart) || $4 + 0 > laststart[k]) laststart[k] = $4 + 0
	next
}
$1 == "procend" {
	if (NF < 6 || !num($2) || !num($3) || !num($4) || !num($5)) { bad("bad procend"); next }
	k = $3 SUBSEP $2
	if (!((k SUBSEP $5) in procs)) { bad("procend without proc"); next }
	if ((k SUBSEP $5) in procended) { bad("second procend"); next }
	procended[k SUBSEP $5] = 1; ended(k, $4 + 0)
	if ($NF == "term") termed++
	next
}
$1 == "exit" {
	if (NF < 4 || !num($2) || !num($3) || !num($4)) { bad("bad exit"); next }
	tried++; rc[$3]++
	if (($2) in cur) {
		xt[cur[$2]] = $4 + 0
		delete cur[$2]
	}
	next
}
$1 == "accept" {
	if (NF < 3 || !num($2)) { bad("bad accept"); next }
	f = $2 + 0
	if (naccept > 0 && f < maxacc) {
		stale_accepted++
		if (stale_accepted <= 5)
			printf "check: stale write accepted: fence %d after %d (line %d)\n", \
			    f, maxacc, NR > "/dev/stderr"
	}
	if (naccept == 0 || f > maxacc) maxacc = f
	naccept++
	if ($3 == "late") accepted_late++
	next
}
$1 == "reject" {
	if (NF < 5 || !num($2)) { bad("bad reject"); next }
	rejected++
	if ($NF == "late") rejected_late++
	else {
		rejected_inlock++
		if (rejected_inlock <= 5)
			printf "check: in-lock write rejected: fence %s %s %s (line %d)\n", \
			    $2, $3, $4, NR > "/dev/stderr"
	}
	next
}
$1 == "kill" { kills++; kstage[$3]++; kshape[NF >= 5 ? $5 : "plain"]++; next }
$1 == "pause" { pauses++; pause_ms += $3; next }
$1 == "delay" { delays++; next }
$1 == "replica-kill" { rkills++; next }
$1 == "replica-restart" { rrestarts++; next }
$1 == "checked" { checked++; next }
$1 == "leaked" {
	leaked++
	printf "check: lock key %s left on server %s (pttl %s)\n", $3, $2, $4 > "/dev/stderr"
	next
}
$1 == "note" { next }
/^[ \t]*$/ { next }
{ bad("unknown line") }

END {
	for (i = 1; i <= n; i++)
		jobs[shape[i]]++
	# Where each section ends: at its job's last end line, or at the
	# worker's exit line after a death, or never (see above).
	for (i = 1; i <= n; i++) {
		k = key[i]
		if (nend[k] == nproc[k]) {
			en[i] = lastend[k]; how[i] = "end"
		} else if ((i in xt) && xt[i] >= laststart[k]) {
			en[i] = (k in lastend) && lastend[k] > xt[i] ? lastend[k] : xt[i]
			how[i] = "exit"; killed_open++
		} else {
			en[i] = inf; how[i] = "open"; unclosed++
		}
	}
	# Sections sorted by start: insertion sort, the log being almost in
	# time order already.
	for (i = 1; i <= n; i++)
		ord[i] = i
	for (i = 2; i <= n; i++) {
		x = ord[i]; j = i - 1
		while (j >= 1 && st[ord[j]] > st[x]) { ord[j + 1] = ord[j]; j-- }
		ord[j + 1] = x
	}
	maxend = -1; owner = 0; gap = -1; kgap = -1
	for (j = 1; j <= n; j++) {
		i = ord[j]
		if (owner && st[i] < maxend) {
			overlaps++
			o = (en[i] < maxend ? en[i] : maxend) - st[i]
			if (overlaps <= 10)
				printf "check: OVERLAP: fence %d (worker %s, %s..%s, closed by %s) " \
				    "started %s before fence %d (worker %s, %s..%s, closed by %s) ended\n", \
				    fen[i], wk[i], ms(st[i]), (en[i] == inf ? "never" : ms(en[i])), how[i], \
				    (maxend == inf ? "forever" : ms(maxend - st[i])), fen[owner], wk[owner], \
				    ms(st[owner]), (maxend == inf ? "never" : ms(maxend)), how[owner] \
				    > "/dev/stderr"
		} else if (owner) {
			if (gap < 0 || st[i] - maxend < gap) {
				gap = st[i] - maxend; gapa = owner; gapb = i
			}
			if (how[owner] == "exit" && (kgap < 0 || st[i] - maxend < kgap)) {
				kgap = st[i] - maxend; kgapa = owner; kgapb = i
			}
		}
		if (j > 1 && fen[i] <= fen[ord[j - 1]]) {
			fence_errors++
			if (fence_errors <= 5)
				printf "check: fence order: fence %d (worker %s) started after fence %d (worker %s)\n", \
				    fen[i], wk[i], fen[ord[j - 1]], wk[ord[j - 1]] > "/dev/stderr"
		}
		if (en[i] > maxend) { maxend = en[i]; owner = i }
	}

	# Details on stderr: how the cycles ended and how close it came.
	line = ""
	for (r in rc) line = line " " r "x" rc[r]
	printf "check: redlock-cli exit codes (code x count):%s\n", line > "/dev/stderr"
	line = ""
	for (s in status) line = line " " s " " status[s]
	printf "check: sections: %d started, %d ended (%s ), %d closed by exit after SIGKILL, " \
	    "%d got SIGTERM, %d never closed\n", n, completed + 0, line, killed_open + 0, \
	    termed + 0, unclosed + 0 > "/dev/stderr"
	line = ""
	for (s in kstage) line = line " " s " " kstage[s]
	if (kills) printf "check: kills by stage:%s\n", line > "/dev/stderr"
	line = ""
	for (s in roles) line = line " " s " " roles[s]
	if (line != "") printf "check: other processes of jobs:%s\n", line > "/dev/stderr"
	if (pauses) printf "check: pauses: %d, %.1fs in all\n", pauses, pause_ms / 1000 > "/dev/stderr"
	if (rkills) printf "check: replicas: %d killed, %d restarted\n", rkills, rrestarts > "/dev/stderr"
	printf "check: writes: %d accepted (%d late), %d rejected (%d late, %d in-lock)\n", \
	    naccept, accepted_late, rejected, rejected_late, rejected_inlock > "/dev/stderr"
	if (gap >= 0)
		printf "check: closest hand-off: %s between fence %d (closed by %s) and fence %d\n", \
		    ms(gap), fen[gapa], how[gapa], fen[gapb] > "/dev/stderr"
	if (kgap >= 0)
		printf "check: closest hand-off after a SIGKILLed holder: %s between fence %d and fence %d\n", \
		    ms(kgap), fen[kgapa], fen[kgapb] > "/dev/stderr"
	if (malformed) printf "check: %d malformed lines\n", malformed > "/dev/stderr"
	notrun = rc[126] + rc[127]
	if (notrun)
		printf "check: %d cycles could not run their command (exit 126/127): a broken harness\n", \
		    notrun > "/dev/stderr"

	leaks = checked ? leaked + 0 : "unchecked"
	printf "stress: %d cycles (%d tried), %d workers, %d server%s, ttl %dms, " \
	    "jobs: %d pipelines %d with a background process, " \
	    "faults: %d kills (%d of pipelines, %d with a background process) " \
	    "%d pauses %d delayed writes %d replica kills, lost locks %d, " \
	    "overlaps %d, stale writes accepted %d, rejected %d (%d late, %d in-lock), " \
	    "fence order errors %d, locks leaked %s\n", \
	    completed, tried, cfg["workers"], cfg["servers"], \
	    (cfg["servers"] == 1 ? "" : "s"), cfg["ttl_ms"], jobs["pipe"], jobs["bg"], \
	    kills, kshape["pipe"], kshape["bg"], pauses, delays, rkills, \
	    rc[75], overlaps, stale_accepted, rejected, rejected_late, rejected_inlock, \
	    fence_errors, leaks
	fail = overlaps || stale_accepted || rejected_inlock || fence_errors || \
	    leaked || !checked || malformed || notrun || completed == 0
	exit (fail ? 1 : 0)
}
