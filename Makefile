# redlock-cli: see README.md.  `make demo` and `make test` do all the set-up.

PROG	= redlock-cli
SRCS	= src/main.c src/cmd.c src/options.c src/settings.c src/cmd-acquire.c src/cmd-extend.c \
	  src/cmd-release.c src/cmd-run.c src/cmd-status.c src/conn.c src/conn-connect.c src/conn-io.c src/conn-reply.c src/conn-bounds.c src/conn-resolve.c src/conn-sentinel.c \
	  src/lock.c src/lock-acquire.c src/lock-cluster.c src/lock-status.c src/lock-wait.c src/scripts.c src/tls.c src/supervise.c src/url.c src/duration.c \
	  src/clock.c src/token.c src/log.c src/xmalloc.c \
	  src/signame.c src/endsig.c src/keyslot.c src/json.c
# run's guardian and the job's processes (see src/supervise-impl.h).
SRCS	+= src/supervise-guard.c src/supervise-reap.c src/supervise-spawn.c \
	  src/supervise-proc.c
OBJS	= $(SRCS:.c=.o)
MAN	= man/redlock-cli.1

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
MANDIR	?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d

PKGS	= hiredis uuid
CC	?= cc
CFLAGS	?= -O2 -g
# Always on, even when CFLAGS is given on the command line (sanitize).
WFLAGS	= -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror
WFLAGS	+= $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# hiredis and libuuid are linked statically when their archives exist: a
# lock in front of every cron job should start as fast as flock, and each
# shared library costs the dynamic loader measurable time per start.
LIBDIRS	= $(shell pkg-config --variable=libdir $(PKGS) 2>/dev/null)
STATIC	= $(and $(wildcard $(addsuffix /libhiredis.a,$(LIBDIRS))),$(wildcard $(addsuffix /libuuid.a,$(LIBDIRS))))
# dlopen() is in libc from glibc 2.34 on; older ones need -ldl.
NEED_LDL = $(shell printf '\043include <dlfcn.h>\nint main(void){return dlopen("x",0)!=0;}' | $(CC) -x c - -o /dev/null 2>/dev/null || echo -ldl)
LDLIBS	+= $(NEED_LDL)
ifneq ($(STATIC),)
LDLIBS	+= -Wl,-Bstatic -lhiredis -luuid -Wl,-Bdynamic
else
LDLIBS	+= $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lhiredis -luuid)
endif

# Debian packages the build, the tests and the demo need.
DEPS	= build-essential pkg-config libhiredis-dev uuid-dev libssl-dev \
	  redis-server redis-tools redis-sentinel bats bats-support \
	  bats-assert mandoc shellcheck valgrind socat

all: $(PROG)

$(PROG): $(OBJS)
	$(CC) $(WFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

%.o: %.c
	$(CC) $(WFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# The scripts' SHA-1s for EVALSHA, computed once here rather than by every
# process at start-up (where hashing 2 KB of Lua was a fifth of the work).
SHATOOL	= src/tools/script-sha
src/scripts-sha.h: $(SHATOOL).c src/scripts-lua.h src/sha1.c src/redlock.h
	$(CC) $(WFLAGS) $(CFLAGS) -Isrc -o $(SHATOOL) $(SHATOOL).c src/sha1.c
	./$(SHATOOL) >$@.tmp && mv $@.tmp $@
src/scripts.o: src/scripts-sha.h

-include $(OBJS:.o=.d)

deps:
	@missing=""; for p in $(DEPS); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
	    grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "installing:$$missing"; \
	    SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	        --no-install-recommends $$missing >/dev/null; \
	fi

UNIT	= tests/unit/test-units
$(UNIT): tests/unit/test-units.c src/sha1.o $(filter-out src/main.o,$(OBJS))
	$(CC) $(WFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test: deps $(PROG) $(UNIT)
	bats tests/ tests/faults/

# The whole suite again, with redlock-cli as a least-privilege ACL user.
test-acl: $(PROG) $(UNIT)
	REDLOCK_TEST_ACL=1 bats tests/ tests/faults/

bench: $(PROG)
	bash bench/run.sh

# The peers bench/run.sh compares against: etcd, node-redlock, gnuplot.
bench-deps:
	bash bench/deps.sh

demo: deps $(PROG)
	@sh tests/demo.sh

# The suite against an ASan+UBSan build (any report aborts the process,
# which fails its test), then the normal build again.
SANFLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	   -fno-sanitize-recover=all
sanitize:
	$(MAKE) clean
	$(MAKE) CFLAGS="$(SANFLAGS)" $(PROG) $(UNIT)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:exitcode=99 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 bats tests/ tests/faults/; \
	rc=$$?; $(MAKE) clean; $(MAKE) $(PROG); exit $$rc

# The suite with redlock-cli under valgrind memcheck (tests/helpers.bash
# puts a wrapper first on PATH); timing-bound tests skip themselves.
valgrind: $(PROG) $(UNIT)
	REDLOCK_TEST_VALGRIND=1 bats tests/ tests/faults/

lint:
	mandoc -Tlint -W warning $(MAN)
	groff -mandoc -ww -z $(MAN)
	shellcheck -s bash completions/redlock-cli.bash tests/*.bash tests/faults/*.bash bench/*.sh
	bash -n completions/redlock-cli.bash

install: $(PROG)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 $(PROG) $(DESTDIR)$(BINDIR)/$(PROG)
	install -m 644 $(MAN) $(DESTDIR)$(MANDIR)/man1/redlock-cli.1
	install -m 644 completions/redlock-cli.bash $(DESTDIR)$(BASHCOMPDIR)/redlock-cli
	install -m 644 completions/_redlock-cli $(DESTDIR)$(ZSHCOMPDIR)/_redlock-cli
	install -m 644 completions/redlock-cli.fish $(DESTDIR)$(FISHCOMPDIR)/redlock-cli.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/$(PROG) $(DESTDIR)$(MANDIR)/man1/redlock-cli.1 \
	    $(DESTDIR)$(BASHCOMPDIR)/redlock-cli $(DESTDIR)$(ZSHCOMPDIR)/_redlock-cli \
	    $(DESTDIR)$(FISHCOMPDIR)/redlock-cli.fish

clean:
	rm -f $(PROG) $(UNIT) $(OBJS) $(OBJS:.o=.d) src/sha1.o src/sha1.d \
	    src/scripts-sha.h $(SHATOOL)

.PHONY: all deps test test-acl valgrind bench bench-deps demo sanitize lint install uninstall clean

# libFuzzer targets (make fuzz; FUZZ_SECONDS per target) and the stress
# run with its history checker (make stress).
include tests/fuzz/fuzz.mk
-include tests/stress/stress.mk
