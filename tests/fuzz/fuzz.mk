# SPDX-License-Identifier: MIT
# libFuzzer targets (tests/fuzz/fuzz-*.c): `make fuzz-build`, `make fuzz`,
# `make fuzz-check` (what tests/fuzz.bats runs), `make fuzz-hiredis1`.
# Included from the Makefile; also works alone:
#   make -f tests/fuzz/fuzz.mk fuzz FUZZ_SECONDS=10
# Needs clang with libFuzzer (Debian: clang).  Everything built goes to
# FUZZ_BIN (tests/fuzz/bin/); the committed seed corpora are never written
# to.
#
# HIREDIS_PREFIX=DIR builds against the hiredis installed under DIR
# (DIR/include/hiredis, DIR/lib/libhiredis.a, linked statically), as
# tests/deps/hiredis.sh leaves hiredis 1.2; give it a FUZZ_BIN of its own,
# since objects built against one hiredis are not rebuilt for another:
#   make fuzz HIREDIS_PREFIX=build/deps/hiredis \
#       FUZZ_BIN=build/fuzz-hiredis1 FUZZ_TARGETS=fuzz-reply
# fuzz-hiredis1 builds that prefix if needed (tests/deps/hiredis.sh) and
# runs fuzz-check on fuzz-reply there.

CLANG		?= clang
FUZZ_SECONDS	?= 60
FUZZ_RUNS	?= 50000
FUZZ_DIR	 = tests/fuzz
FUZZ_BIN	?= $(FUZZ_DIR)/bin
FUZZ_TARGETS	 = fuzz-url fuzz-duration fuzz-options fuzz-reply
FUZZ_BINS	 = $(FUZZ_TARGETS:%=$(FUZZ_BIN)/%)
FUZZ_SAN	 = -fsanitize=address,undefined -fno-sanitize-recover=all
ifdef HIREDIS_PREFIX
FUZZ_HIREDIS_CFLAGS = -I$(HIREDIS_PREFIX)/include
FUZZ_HIREDIS_LIBS   = $(HIREDIS_PREFIX)/lib/libhiredis.a
else
FUZZ_HIREDIS_CFLAGS = $(shell pkg-config --cflags hiredis 2>/dev/null)
FUZZ_HIREDIS_LIBS   = $(shell pkg-config --libs hiredis 2>/dev/null || \
		      echo -lhiredis)
endif
FUZZ_CFLAGS	 = -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
		   -Wall -Wextra $(FUZZ_HIREDIS_CFLAGS) \
		   $(shell pkg-config --cflags uuid 2>/dev/null)
FUZZ_LDLIBS	 = $(FUZZ_HIREDIS_LIBS) \
		   $(shell pkg-config --libs uuid 2>/dev/null || echo -luuid) -ldl
# Every source but main.c (and tls-linked.c: the fuzzers reach OpenSSL
# as a build with the shared C library does), instrumented for coverage
# and the sanitizers, in an archive: a target that includes one of them to reach its static
# functions (fuzz-url includes url.c) defines its symbols first, so the
# linker never takes that member from the archive.
FUZZ_SRCS	 = $(filter-out src/main.c src/tls-linked.c,$(wildcard src/*.c))
FUZZ_OBJS	 = $(FUZZ_SRCS:src/%.c=$(FUZZ_BIN)/obj/%.o)
FUZZ_LIB	 = $(FUZZ_BIN)/obj/libredlock-fuzz.a
# Where fuzz-hiredis1 builds.
FUZZ_H1_BIN	 = build/fuzz-hiredis1

fuzz-build: $(FUZZ_BINS)

$(FUZZ_BIN)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
	    -MMD -MP -c -o $@ $<

# lock-scripts.c needs the generated SHA-1s (the Makefile's rule, or this one
# when this file is used alone).
$(FUZZ_BIN)/obj/lock-scripts.o: src/scripts-sha.h
ifndef SHATOOL
src/scripts-sha.h:
	$(MAKE) -f Makefile src/scripts-sha.h
endif

$(FUZZ_LIB): $(FUZZ_OBJS)
	rm -f $@
	ar rcs $@ $(FUZZ_OBJS)

$(FUZZ_BIN)/fuzz-%: $(FUZZ_DIR)/fuzz-%.c $(FUZZ_LIB)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -MMD -MP \
	    -MF $@.d -o $@ $< $(FUZZ_LIB) $(FUZZ_LDLIBS)

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_BINS:=.d)

# Each target for FUZZ_SECONDS on a copy of its seed corpus (new inputs
# are thrown away), with its dictionary if it has one.  One line each:
# "fuzz-url: N execs, 0 crashes".  A crash input is kept in
# FUZZ_BIN/artifacts/ and the run fails; copy the input into
# tests/fuzz/crashes/<target>-<what> once it is understood.
# The lines of a crash report worth showing: the reason, our frames.
FUZZ_REPORT	 = check failed|ERROR:|SUMMARY|Test unit written|/(src|tests/fuzz)/[^ ]+:[0-9]+

fuzz: fuzz-build
	@tmp=$$(mktemp -d) || exit 1; trap 'rm -rf "$$tmp"' EXIT; \
	mkdir -p $(FUZZ_BIN)/artifacts; status=0; \
	for t in $(FUZZ_TARGETS); do \
	    mkdir "$$tmp/$$t" && cp $(FUZZ_DIR)/corpus/$$t/* "$$tmp/$$t/"; \
	    dict=; [ ! -f $(FUZZ_DIR)/dict/$$t.dict ] || \
	        dict=-dict=$(FUZZ_DIR)/dict/$$t.dict; \
	    $(FUZZ_BIN)/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	        -print_final_stats=1 $$dict \
	        -artifact_prefix=$(FUZZ_BIN)/artifacts/$$t- \
	        "$$tmp/$$t" >"$$tmp/$$t.log" 2>&1; rc=$$?; \
	    execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' \
	        "$$tmp/$$t.log"); \
	    if [ $$rc -eq 0 ]; then crashes=0; else crashes=1; status=1; fi; \
	    echo "$$t: $${execs:-?} execs, $$crashes crashes"; \
	    if [ $$rc -ne 0 ]; then \
	        grep -aE "$(FUZZ_REPORT)" "$$tmp/$$t.log" | head -n 30; \
	    fi; \
	done; exit $$status

# What tests/fuzz.bats checks, for FUZZ_TARGETS: every input kept in
# tests/fuzz/crashes/ for a target runs clean through it, and FUZZ_RUNS
# inputs from a fixed seed (the same ones on every run, so that CI does
# not pass or fail by chance) find nothing.  One line each:
# "fuzz-reply: 9 crash inputs clean; 50000 execs, 0 crashes".
fuzz-check: fuzz-build
	@tmp=$$(mktemp -d) || exit 1; trap 'rm -rf "$$tmp"' EXIT; status=0; \
	for t in $(FUZZ_TARGETS); do \
	    kept=0; \
	    for f in $(FUZZ_DIR)/crashes/$$t-*; do \
	        [ -e "$$f" ] || continue; \
	        kept=$$((kept + 1)); \
	        if ! $(FUZZ_BIN)/$$t -timeout=10 -artifact_prefix="$$tmp/" \
	            "$$f" >"$$tmp/crash.log" 2>&1; then \
	            echo "$$t: $${f##*/} still crashes it:"; status=1; \
	            grep -aE "$(FUZZ_REPORT)" "$$tmp/crash.log" | head -n 30; \
	        fi; \
	    done; \
	    mkdir "$$tmp/$$t" && cp $(FUZZ_DIR)/corpus/$$t/* "$$tmp/$$t/"; \
	    dict=; [ ! -f $(FUZZ_DIR)/dict/$$t.dict ] || \
	        dict=-dict=$(FUZZ_DIR)/dict/$$t.dict; \
	    $(FUZZ_BIN)/$$t -seed=1 -runs=$(FUZZ_RUNS) -timeout=10 \
	        -print_final_stats=1 $$dict -artifact_prefix="$$tmp/$$t-" \
	        "$$tmp/$$t" >"$$tmp/$$t.log" 2>&1; rc=$$?; \
	    execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' \
	        "$$tmp/$$t.log"); \
	    if [ $$rc -eq 0 ] && [ -n "$$execs" ]; then crashes=0; \
	    else crashes=1; status=1; fi; \
	    echo "$$t: $$kept crash inputs clean; $${execs:-?} execs, $$crashes crashes"; \
	    if [ $$crashes -ne 0 ]; then \
	        grep -aE "$(FUZZ_REPORT)" "$$tmp/$$t.log" | head -n 30; \
	    fi; \
	done; exit $$status

fuzz-hiredis1:
	@prefix=$$(sh tests/deps/hiredis.sh) || exit 1; \
	$(MAKE) --no-print-directory -f $(FUZZ_DIR)/fuzz.mk \
	    HIREDIS_PREFIX="$$prefix" FUZZ_BIN=$(FUZZ_H1_BIN) \
	    FUZZ_TARGETS=fuzz-reply fuzz-check

fuzz-clean:
	rm -rf $(FUZZ_DIR)/bin $(FUZZ_H1_BIN)

.PHONY: fuzz fuzz-build fuzz-check fuzz-hiredis1 fuzz-clean
