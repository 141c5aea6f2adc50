# libFuzzer targets (tests/fuzz/fuzz-*.c): `make fuzz-build`, `make fuzz`.
# Included from the Makefile; also works alone:
#   make -f tests/fuzz/fuzz.mk fuzz FUZZ_SECONDS=10
# Needs clang with libFuzzer (Debian: clang).  Everything built goes to
# tests/fuzz/bin/; the committed seed corpora are never written to.

CLANG		?= clang
FUZZ_SECONDS	?= 60
FUZZ_DIR	 = tests/fuzz
FUZZ_TARGETS	 = fuzz-url fuzz-duration fuzz-options fuzz-reply
FUZZ_BINS	 = $(FUZZ_TARGETS:%=$(FUZZ_DIR)/bin/%)
FUZZ_SAN	 = -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS	 = -std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
		   -Wall -Wextra \
		   $(shell pkg-config --cflags hiredis uuid 2>/dev/null)
FUZZ_LDLIBS	 = $(shell pkg-config --libs hiredis uuid 2>/dev/null || \
		   echo -lhiredis -luuid) -ldl
# Every source but main.c, instrumented for coverage and the sanitizers,
# in an archive: a target that includes one of them to reach its static
# functions (fuzz-url includes url.c) defines its symbols first, so the
# linker never takes that member from the archive.
FUZZ_SRCS	 = $(filter-out src/main.c,$(wildcard src/*.c))
FUZZ_OBJS	 = $(FUZZ_SRCS:src/%.c=$(FUZZ_DIR)/bin/obj/%.o)
FUZZ_LIB	 = $(FUZZ_DIR)/bin/obj/libredlock-fuzz.a

fuzz-build: $(FUZZ_BINS)

$(FUZZ_DIR)/bin/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
	    -MMD -MP -c -o $@ $<

# scripts.c needs the generated SHA-1s (the Makefile's rule, or this one
# when this file is used alone).
$(FUZZ_DIR)/bin/obj/scripts.o: src/scripts-sha.h
ifndef SHATOOL
src/scripts-sha.h:
	$(MAKE) -f Makefile src/scripts-sha.h
endif

$(FUZZ_LIB): $(FUZZ_OBJS)
	rm -f $@
	ar rcs $@ $(FUZZ_OBJS)

$(FUZZ_DIR)/bin/fuzz-%: $(FUZZ_DIR)/fuzz-%.c $(FUZZ_LIB)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -MMD -MP \
	    -MF $@.d -o $@ $< $(FUZZ_LIB) $(FUZZ_LDLIBS)

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_BINS:=.d)

# Each target for FUZZ_SECONDS on a copy of its seed corpus (new inputs
# are thrown away), with its dictionary if it has one.  One line each:
# "fuzz-url: N execs, 0 crashes".  A crash input is kept in
# tests/fuzz/bin/artifacts/ and the run fails; copy the input into
# tests/fuzz/crashes/<target>-<what> once it is understood.
# The lines of a crash report worth showing: the reason, our frames.
FUZZ_REPORT	 = check failed|ERROR:|SUMMARY|Test unit written|/(src|tests/fuzz)/[^ ]+:[0-9]+

fuzz: fuzz-build
	@tmp=$$(mktemp -d) || exit 1; trap 'rm -rf "$$tmp"' EXIT; \
	mkdir -p $(FUZZ_DIR)/bin/artifacts; status=0; \
	for t in $(FUZZ_TARGETS); do \
	    mkdir "$$tmp/$$t" && cp $(FUZZ_DIR)/corpus/$$t/* "$$tmp/$$t/"; \
	    dict=; [ ! -f $(FUZZ_DIR)/dict/$$t.dict ] || \
	        dict=-dict=$(FUZZ_DIR)/dict/$$t.dict; \
	    $(FUZZ_DIR)/bin/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	        -print_final_stats=1 $$dict \
	        -artifact_prefix=$(FUZZ_DIR)/bin/artifacts/$$t- \
	        "$$tmp/$$t" >"$$tmp/$$t.log" 2>&1; rc=$$?; \
	    execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' \
	        "$$tmp/$$t.log"); \
	    if [ $$rc -eq 0 ]; then crashes=0; else crashes=1; status=1; fi; \
	    echo "$$t: $${execs:-?} execs, $$crashes crashes"; \
	    if [ $$rc -ne 0 ]; then \
	        grep -aE "$(FUZZ_REPORT)" "$$tmp/$$t.log" | head -n 30; \
	    fi; \
	done; exit $$status

fuzz-clean:
	rm -rf $(FUZZ_DIR)/bin

.PHONY: fuzz fuzz-build fuzz-clean
