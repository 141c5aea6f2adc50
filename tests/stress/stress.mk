# SPDX-License-Identifier: MIT
# `make stress`: the history checker's stress run (tests/stress/stress.sh),
# 16 workers x 200 cycles of `redlock-cli run` on one key with random
# SIGKILLs, server pauses and delayed writes; prints one summary line and
# fails on any overlap, accepted stale write or leaked lock.  Included from
# the Makefile; settings go through as make variables or the environment,
# e.g. `make stress STRESS_CYCLES=50 STRESS_SERVERS=3`.

STRESS_WORKERS	?= 16
STRESS_CYCLES	?= 200
export STRESS_WORKERS STRESS_CYCLES

stress: redlock-cli
	bash tests/stress/stress.sh

.PHONY: stress
