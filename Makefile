# SPDX-License-Identifier: MIT
# redlock-cli: see README.md.  `make demo` and `make test` do all the set-up.

PROG	= redlock-cli
SRCS	= src/main.c src/cmd.c src/options.c src/options-table.c src/options-hint.c src/settings.c src/cmd-acquire.c src/cmd-extend.c src/cmd-help.c \
	  src/cmd-release.c src/cmd-run.c src/cmd-status.c src/conn.c src/conn-connect.c src/conn-io.c src/conn-poll.c src/conn-resp.c src/conn-reply.c src/conn-bounds.c src/conn-resolve.c src/conn-sentinel.c src/conn-redirect.c \
	  src/lock.c src/lock-call.c src/lock-acquire.c src/lock-status.c src/lock-wait.c src/lock-scripts.c src/tls.c src/supervise.c src/url.c src/url-guess.c src/outcome.c src/metrics.c src/metrics-read.c src/duration.c \
	  src/clock.c src/token.c src/log.c src/xmalloc.c \
	  src/signame.c src/endsig.c src/keyslot.c src/json.c src/number.c src/help.c \
	  src/options-value.c src/options-error.c
# Operations (issue 17): list, release --force, and what they share with
# status.
SRCS	+= src/cmd-list.c src/status-print.c src/lock-list.c src/lock-force.c \
	  src/conn-masters.c src/cursor.c
# run's guardian and the job's processes (see src/supervise-impl.h).
SRCS	+= src/supervise-guard.c src/supervise-job.c src/supervise-start.c src/supervise-release.c src/supervise-audit.c src/supervise-spawn.c \
	  src/supervise-proc.c
# queues: --queue latest's notes, --skip-outdated, a holder's cancel.
SRCS	+= src/lock-queue.c src/lock-listen.c src/supervise-listen.c
# How tls.c reaches OpenSSL (src/tls-impl.h): both are compiled, one is
# linked (TLS_OBJ, below).
SRCS	+= src/tls-dlopen.c src/tls-linked.c
# What a holder records of its command, secrets masked (issue 32).
SRCS	+= src/mask.c
# Each lock's run history, and the history verb (issue 36).
SRCS	+= src/lock-history.c src/cmd-history.c src/history-print.c src/timefmt.c src/lock-list-all.c src/lock-list-one.c
# Scripts played with native commands, for servers that refuse scripts.
SRCS	+= src/scripts-native.c src/native-view.c src/native-owner.c src/native-cmd.c
# Who waits for a mutex, read by status after its snapshot: the script's
# KEYS are the keys it touches (tests/lint/lua_keys.py).
SRCS	+= src/lock-waiters.c
MAN	= man/redlock-cli.1

# Out-of-tree builds: `make BUILDDIR=DIR` puts the objects and binaries
# under DIR (make sanitize and make test HIREDIS=1 use build/...); the
# default is the tree itself.
BUILDDIR ?= .
B	= $(BUILDDIR)
bp	= $(patsubst ./%,%,$(addprefix $(B)/,$(1)))
OBJS	= $(call bp,$(SRCS:.c=.o))
BIN	= $(call bp,$(PROG))

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
MANDIR	?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# zsh's own directory for third-party functions under any prefix; Debian's
# package says vendor-completions (debian/rules).
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d

PKGS	= hiredis uuid
PKG_CONFIG ?= pkg-config
CFLAGS	?= -O2 -g
# The build machine's compiler, for the tool that runs during the build
# (script-sha), when CC is a cross compiler.
CC_FOR_BUILD ?= $(CC)
CFLAGS_FOR_BUILD ?= -O2

# once VAR,TEXT: TEXT expanded the first time VAR is used, then kept, so
# that no pkg-config or compiler probe runs for targets that do not build
# (make clean, make deps) and none runs twice.
once	= $(eval $(1) := $(2))$($(1))

# Always on, even when CFLAGS is given on the command line (sanitize).
# WERROR=0 drops -Werror only (a newer compiler's new warning should not
# break a distribution's build).
WERROR	?= 1
WFLAGS	= -std=c11 -D_GNU_SOURCE -Wall -Wextra $(if $(filter-out 0,$(WERROR)),-Werror)
PKG_CFLAGS = $(call once,PKG_CFLAGS,$(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null))

# Hardening, always on (the flags dpkg-buildflags gives with
# hardening=+all, and more where the compiler has them): PIE, the stack
# protector, _FORTIFY_SOURCE (3 where the compiler has
# __builtin_dynamic_object_size, else 2), -fcf-protection, and full RELRO
# (-z relro -z now: the GOT read-only once loaded).  A packager's own
# _FORTIFY_SOURCE in CPPFLAGS or CFLAGS wins; HARDEN=0 drops them all.
HARDEN	?= 1
# cc_has FLAGS,PROGRAM: y when the compiler takes both without a word.
cc_has	= $(shell printf '$(2)' | $(CC) -Werror $(1) -x c -c - -o /dev/null 2>/dev/null && echo y)
FORTIFY	= $(call once,FORTIFY,$(if $(call cc_has,-O2,\043if !__has_builtin(__builtin_dynamic_object_size)\n\043error\n\043endif\nint x;\n),3,2))
CF_PROT	= $(call once,CF_PROT,$(if $(call cc_has,-fcf-protection,int x;\n),-fcf-protection))
HARDEN_CPPFLAGS = $(if $(filter-out 0,$(HARDEN)),$(if $(findstring _FORTIFY_SOURCE,$(CPPFLAGS) $(CFLAGS)),,-D_FORTIFY_SOURCE=$(FORTIFY)))
HARDEN_CFLAGS = $(if $(filter-out 0,$(HARDEN)),-fPIE -fstack-protector-strong $(CF_PROT))
RELRO	= -Wl,-z,relro -Wl,-z,now
HARDEN_LDFLAGS = $(if $(filter-out 0,$(HARDEN)),$(RELRO))
ALL_CFLAGS = $(HARDEN_CPPFLAGS) $(if $(filter 1,$(STATIC)),-DREDLOCK_STATIC) $(CPPFLAGS) $(WFLAGS) $(PKG_CFLAGS) $(HARDEN_CFLAGS) $(CFLAGS)

# STATIC: how the executable is linked.
#   0 (the default): the C library, OpenSSL, hiredis and libuuid shared,
#	as distributions link them, so that their security updates reach
#	it and OpenSSL follows the system's openssl.cnf.  libssl is opened
#	at the first TLS connection (src/tls-dlopen.c), not at every start.
#	What make sanitize and make valgrind need: ASan and memcheck work
#	with the shared C library only.
#   1: one static-pie executable, with everything in it, for a CI runner
#	or a FROM scratch container (make dist): position-independent like
#	the default, with the same hardening.  OpenSSL is linked in
#	(src/tls-linked.c); it reads no openssl.cnf and sets its own floor,
#	TLS 1.2 at security level 2.  A host name is looked up in a child
#	process (src/conn-resolve.c) with the files and DNS lookups built
#	into the static C library, never an NSS module.  glibc's libc.a
#	warns at such a link that getaddrinfo, gethostbyname and dlopen
#	would need the shared libraries of the same glibc at run time:
#	nothing of ours calls the last two, and the lookup child needs none
#	for files and DNS.  src/tools/link-quiet.awk drops exactly those
#	three from the link's output; any other line still shows.
# Each archive is looked for in the library's pkg-config libdir first (a
# hiredis of one's own: PKG_CONFIG_PATH), then where the compiler finds
# libraries (Debian 12's hiredis.pc names /usr/lib, where its archive is
# not).
STATIC	?= 0
$(if $(filter-out 0 1,$(STATIC)),$(error STATIC is 0 or 1, not '$(STATIC)'))
# archive NAME[,PKG]: the path of libNAME.a, or nothing.
archive	= $(firstword $(wildcard $(shell $(PKG_CONFIG) --variable=libdir $(or $(2),$(1)) 2>/dev/null)/lib$(1).a) \
	  $(abspath $(wildcard $(shell $(CC) -print-file-name=lib$(1).a))))
# STATIC=1 without one of the archives is an error, not a quiet shared link.
need_a	= $(or $(call archive,$(1),$(2)),$(error STATIC=1: no lib$(1).a found (Debian: $(3))))
STATIC_LIBS = $(call once,STATIC_LIBS,$(call need_a,hiredis,,libhiredis-dev) \
	  $(call need_a,uuid,,uuid-dev) $(call need_a,ssl,libssl,libssl-dev) \
	  $(call need_a,crypto,libcrypto,libssl-dev))
SHARED_LIBS = $(call once,SHARED_LIBS,$(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null || echo -lhiredis -luuid))
LINK_MODE = $(if $(filter 1,$(STATIC)),-static-pie,-pie)
LINK_LIBS = $(if $(filter 1,$(STATIC)),$(STATIC_LIBS) -pthread,$(SHARED_LIBS))
# The objects linked: all but the other way to OpenSSL.
TLS_OBJ	= $(call bp,$(if $(filter 1,$(STATIC)),src/tls-linked.o,src/tls-dlopen.o))
LINK_OBJS = $(filter-out $(filter-out $(TLS_OBJ),$(call bp,src/tls-dlopen.o src/tls-linked.o)),$(1))
# dlopen() is in libc from glibc 2.34 on; older ones need -ldl.
NEED_LDL = $(call once,NEED_LDL,$(shell printf '\043include <dlfcn.h>\nint main(void){return dlopen("x",0)!=0;}' | \
	   $(CC) -x c - -o /dev/null 2>/dev/null || echo -ldl))
ALL_LDLIBS = $(LINK_LIBS) $(NEED_LDL) $(LDLIBS)

# Debian packages: to build; for the demo; for the whole suite (every
# command the tests call: jq, socat, ss, strace, nft, man, zsh, fish, clang with its
# libFuzzer (libclang-rt-dev), python3-redis for tests/interop.bats ...).
# Node.js and npm for the node-redlock interop test come from Debian
# unless a node is on PATH.
BUILD_DEPS = build-essential pkg-config libhiredis-dev uuid-dev libssl-dev
DEMO_DEPS  = $(BUILD_DEPS) redis-server redis-tools
DEPS	= $(DEMO_DEPS) redis-sentinel bats bats-support bats-assert \
	  mandoc man-db shellcheck valgrind socat jq iproute2 openssl procps \
	  bash-completion zsh fish clang libclang-rt-dev python3 python3-redis git \
	  faketime lua5.1 strace nftables
APT	= sh tests/deps/apt.sh

all: $(BIN)

ifneq ($(BIN),$(PROG))
$(PROG): $(BIN)
endif

# The flags every object and the link were made with: a change of them
# (STATIC=1 in the same BUILDDIR, CFLAGS) rebuilds everything.
FLAGS_STAMP = $(call bp,.build-flags)
$(FLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(CC) $(ALL_CFLAGS) $(LINK_MODE) $(HARDEN_LDFLAGS) $(LDFLAGS) $(LINK_LIBS) $(LDLIBS)' | \
	    cmp -s - $@ || printf '%s\n' '$(CC) $(ALL_CFLAGS) $(LINK_MODE) $(HARDEN_LDFLAGS) $(LDFLAGS) $(LINK_LIBS) $(LDLIBS)' >$@
FORCE:
$(OBJS) $(call bp,src/sha1.o): $(FLAGS_STAMP)

LINK_CMD = $(CC) $(WFLAGS) $(HARDEN_CFLAGS) $(CFLAGS) $(LINK_MODE) $(HARDEN_LDFLAGS) $(LDFLAGS) -o $@ $(call LINK_OBJS,$(OBJS)) $(ALL_LDLIBS)
$(BIN): $(OBJS) $(FLAGS_STAMP)
ifeq ($(STATIC),1)
	@echo '$(LINK_CMD)'
	@$(LINK_CMD) 2>$@.ld; rc=$$?; \
	    awk -f src/tools/link-quiet.awk $@.ld >&2; rm -f $@.ld; exit $$rc
else
	$(LINK_CMD)
endif

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The scripts' SHA-1s for EVALSHA, computed once here rather than by every
# process at start-up (bench/README.md says what that cost).
# The same for every build, so it stays in src/ whatever BUILDDIR is; made
# by the build machine's compiler, since it runs here.
SHATOOL	= src/tools/script-sha
src/scripts-sha.h: $(SHATOOL).c src/scripts-lua.h src/scripts-queue.h src/scripts-mutex.h \
    src/scripts-semaphore.h src/scripts-list.h src/scripts-shared.h src/scripts-shared-run.h \
    src/scripts-history.h src/scripts-poke.h src/sha1.c src/redlock.h
	$(CC_FOR_BUILD) -std=c11 -D_GNU_SOURCE -Wall -Wextra \
	    $(CFLAGS_FOR_BUILD) -Isrc -o $(SHATOOL) $(SHATOOL).c src/sha1.c
	./$(SHATOOL) >$@.$$$$.tmp && mv $@.$$$$.tmp $@
$(call bp,src/lock-scripts.o): src/scripts-sha.h

-include $(OBJS:.o=.d)

# make deps: what the suite needs; make demo-deps: what the demo needs.
# Both install only what is missing (apt-get, through sudo unless root).
deps:
	@$(APT) $(DEPS)
	@command -v node >/dev/null && command -v npm >/dev/null || \
	    $(APT) nodejs npm
	@[ bench/node/node_modules/.package-lock.json -nt bench/node/package-lock.json ] || \
	    { echo "npm ci in bench/node (redlock, ioredis)"; \
	      cd bench/node && npm ci --no-audit --no-fund --loglevel=error; }

demo-deps:
	@$(APT) $(DEMO_DEPS)

# Whether every package make deps installs is there (CI's fresh root).
deps-check:
	@missing=$$(dpkg-query -W -f='$${db:Status-Abbrev} $${Package}\n' $(DEPS) 2>&1 | \
	    awk '$$1 != "ii" { print $$NF }'); \
	[ -z "$$missing" ] || { echo "not installed: $$missing" >&2; exit 1; }; \
	echo "every package of make deps is installed"

UNIT	= tests/unit/test-units
UNIT_BIN = $(call bp,$(UNIT))
UNIT_SRCS = tests/unit/test-mask.c
$(UNIT_BIN): $(UNIT).c $(UNIT_SRCS) tests/unit/unit.h $(call bp,src/sha1.o) $(filter-out $(call bp,src/main.o),$(OBJS)) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LINK_MODE) $(HARDEN_LDFLAGS) $(LDFLAGS) -o $@ $(call LINK_OBJS,$(filter %.c %.o,$^)) $(ALL_LDLIBS)
ifneq ($(UNIT_BIN),$(UNIT))
$(UNIT): $(UNIT_BIN)
endif

# What the suite is run with: TEST_ENV, then bats on every file.  A tool
# the suite needs and does not find fails its tests after make deps
# (REDLOCK_TEST_MISSING=fail) and skips them in make check.
BATS	= bats
SUITE	= tests/ tests/faults/
# A test still running after this many seconds has hung: it fails with
# "timeout" and the suite goes on, rather than the run waiting for ever
# (make valgrind's slowest test takes a few minutes).  Empty: no limit.
export BATS_TEST_TIMEOUT ?= 900
TEST_BUILD = $(if $(filter-out .,$(B)),REDLOCK_TEST_BUILD=$(abspath $(B)))

ifeq ($(filter-out 0,$(HIREDIS)),)
test: deps $(BIN) $(UNIT_BIN)
	$(TEST_BUILD) REDLOCK_TEST_MISSING=fail $(BATS) $(SUITE)
else
test: test-hiredis
endif

# make check: the suite as a build sandbox runs it (dh_auto_test): installs
# nothing, needs no network; each test whose tool is missing skips with
# one line that names it.  Without bats, only the unit tests run.
check: $(BIN) $(UNIT_BIN)
	@$(TEST_BUILD) sh tests/check.sh $(SUITE)

# The whole suite again, with redlock-cli as a least-privilege ACL user.
test-acl: $(BIN) $(UNIT_BIN)
	$(TEST_BUILD) REDLOCK_TEST_ACL=1 $(BATS) $(SUITE)

bench: $(PROG)
	bash bench/run.sh

# The peers bench/run.sh compares against: etcd, node-redlock, gnuplot.
bench-deps:
	bash bench/deps.sh

# make demo builds quietly: one line, the compiler's output only when the
# build fails (a newcomer reads the first screen as the verdict).
DEMO_LOG = $(B)/demo-build.log
demo: demo-deps
	@mkdir -p $(dir $(DEMO_LOG))
	@if $(MAKE) --no-print-directory $(BIN) >$(DEMO_LOG) 2>&1; then \
	    echo "built $(BIN) (the build's output: $(DEMO_LOG))"; \
	else cat $(DEMO_LOG); echo "make demo: the build failed" >&2; exit 1; fi
	@DEMO_BIN=$(abspath $(BIN)) sh tests/demo.sh

# The suite against an ASan+UBSan build (any report aborts the process,
# which fails its test; timing bounds skip themselves, the plain run
# holds them), built in build/sanitize: the developer's own
# build is left as it was.
SANDIR	= build/sanitize
SANFLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	   -fno-sanitize-recover=all
sanitize:
	$(MAKE) BUILDDIR=$(SANDIR) CFLAGS="$(SANFLAGS)" \
	    $(SANDIR)/$(PROG) $(SANDIR)/$(UNIT)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:exitcode=99 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	REDLOCK_TEST_BUILD=$(abspath $(SANDIR)) REDLOCK_TEST_SANITIZE=1 \
	    $(BATS) $(SUITE)

# The suite with redlock-cli under valgrind memcheck (tests/helpers.bash
# puts a wrapper first on PATH); timing-bound tests skip themselves.
# Built in build/valgrind with the shared C library: memcheck finds malloc
# and free there, and sees nothing of a static executable's heap.
VGDIR	= build/valgrind
valgrind:
	$(MAKE) BUILDDIR=$(VGDIR) $(VGDIR)/$(PROG) $(VGDIR)/$(UNIT)
	REDLOCK_TEST_BUILD=$(abspath $(VGDIR)) REDLOCK_TEST_VALGRIND=1 \
	    $(BATS) $(SUITE)

# make test HIREDIS=1 (= make test-hiredis): the whole suite against
# hiredis 1.2 from Debian 13 (tests/deps/hiredis.sh builds it into
# build/deps/hiredis), linked statically, then shared (found through an
# rpath), each built in build/hiredis-LINK.  HIREDIS_LINKS=static runs one.
HIREDIS_LINKS = static shared
# What the shared link runs (CI: the files that exercise the link and the
# parser, since the static leg has run everything against the same 1.2).
HIREDIS_SHARED_SUITE = $(SUITE)
# Not $(MAKE) itself, which would run the whole loop, bats too, under -n.
SUBMAKE	= $(MAKE)
test-hiredis: deps
	@prefix=$$(sh tests/deps/hiredis.sh) || exit 1; \
	pc=$$(dirname "$$(find "$$prefix" -name hiredis.pc | head -n 1)"); \
	ver=$$(PKG_CONFIG_PATH=$$pc $(PKG_CONFIG) --modversion hiredis); \
	for link in $(HIREDIS_LINKS); do \
	    b=build/hiredis-$$link; static=1; ldflags="$(LDFLAGS)"; \
	    suite="$(SUITE)"; \
	    if [ $$link = shared ]; then static=0; suite="$(HIREDIS_SHARED_SUITE)"; \
	        ldflags="$$ldflags -Wl,-rpath,$$(PKG_CONFIG_PATH=$$pc $(PKG_CONFIG) --variable=libdir hiredis)"; fi; \
	    echo "== hiredis $$ver, $$link: $$b"; \
	    PKG_CONFIG_PATH=$$pc $(SUBMAKE) --no-print-directory BUILDDIR=$$b \
	        STATIC=$$static LDFLAGS="$$ldflags" \
	        $$b/$(PROG) $$b/$(UNIT) || exit 1; \
	    REDLOCK_TEST_BUILD=$(abspath .)/$$b REDLOCK_TEST_HIREDIS=$$ver \
	    REDLOCK_TEST_LINK=$$link REDLOCK_TEST_MISSING=fail \
	        $(BATS) $$suite || exit 1; \
	done

# make test-servers: the suite against newer servers, each built from a
# Debian source package by tests/deps/NAME.sh (cached in build/deps/NAME),
# Sentinel and Cluster included in their own modes.  By default Valkey 8.1
# and Redis 8.0 from Debian 13 (valkey, redis8); SERVERS names others:
# valkey9 (9.1, sid), valkey9-nolua (the same without its Lua engine) and
# redis86 (8.6, experimental).  Every server named runs, and the target
# fails if one of them failed, so that one server's failures do not hide
# another's.  Without Lua only exclusive locks work (through native
# commands): valkey9-nolua runs NOLUA_SUITE unless SUITE is given.
SERVERS	= valkey redis8
NOLUA_SUITE = tests/noscript.bats
test-servers: deps $(BIN) $(UNIT_BIN)
	@failed=; for s in $(SERVERS); do \
	    bin=$$(bash tests/deps/$$s.sh) || exit 1; \
	    engine=redis; [ -x "$$bin/valkey-server" ] && engine=valkey; \
	    suite="$(SUITE)"; \
	    nolua=; case $$s in *-nolua) nolua=$$bin/$$engine-server; \
	        [ "$(origin SUITE)" = file ] && suite="$(NOLUA_SUITE)";; esac; \
	    echo "== $$s: $$("$$bin/$$engine-server" --version)"; \
	    $(TEST_BUILD) REDLOCK_TEST_MISSING=fail REDLOCK_TEST_NOLUA_BIN=$$nolua \
	    REDLOCK_TEST_SERVER_BIN=$$bin/$$engine-server \
	    REDLOCK_TEST_SENTINEL_BIN=$$bin/$$engine-sentinel \
	    REDLOCK_TEST_CLI_BIN=$$bin/$$engine-cli \
	        $(BATS) $$suite || failed="$$failed $$s"; \
	done; \
	[ -z "$$failed" ] || { echo "make test-servers: failed on$$failed"; exit 1; }

lint:
	python3 tests/lint/floors.py src
	python3 tests/lint/sizes.py src
	mandoc -Tlint -W warning $(MAN)
	groff -mandoc -ww -z $(MAN)
	shellcheck -s bash completions/redlock-cli.bash tests/*.bash tests/faults/*.bash bench/*.sh
	bash -n completions/redlock-cli.bash

install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/$(PROG)
	install -m 644 $(MAN) $(DESTDIR)$(MANDIR)/man1/redlock-cli.1
	install -m 644 completions/redlock-cli.bash $(DESTDIR)$(BASHCOMPDIR)/redlock-cli
	install -m 644 completions/_redlock-cli $(DESTDIR)$(ZSHCOMPDIR)/_redlock-cli
	install -m 644 completions/redlock-cli.fish $(DESTDIR)$(FISHCOMPDIR)/redlock-cli.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/$(PROG) $(DESTDIR)$(MANDIR)/man1/redlock-cli.1 \
	    $(DESTDIR)$(BASHCOMPDIR)/redlock-cli $(DESTDIR)$(ZSHCOMPDIR)/_redlock-cli \
	    $(DESTDIR)$(FISHCOMPDIR)/redlock-cli.fish

# make dist: the release for CI runners and containers, in DISTDIR:
# redlock-cli-VERSION-linux-ARCH.tar.gz, holding the static-pie executable
# (built in build/dist with STATIC=1), the man page, the completions,
# LICENSE and a README (README.md's opening and its "On a CI runner"),
# and SHA256SUMS for the tarball.
DISTDIR	= build/dist
DISTBUILD = build/dist/static
VERSION	= $(call once,VERSION,$(shell sed -n 's/^\#define VERSION[[:space:]]*"\(.*\)"/\1/p' src/redlock.h))
ARCH	= $(call once,ARCH,$(firstword $(subst -, ,$(shell $(CC) -dumpmachine))))
DISTNAME = $(PROG)-$(VERSION)-linux-$(ARCH)
dist:
	$(MAKE) --no-print-directory STATIC=1 BUILDDIR=$(DISTBUILD) $(DISTBUILD)/$(PROG)
	rm -rf $(DISTDIR)/$(DISTNAME) && mkdir -p $(DISTDIR)/$(DISTNAME)/completions
	install -m 755 $(DISTBUILD)/$(PROG) $(DISTDIR)/$(DISTNAME)/$(PROG)
	install -m 644 $(MAN) LICENSE $(DISTDIR)/$(DISTNAME)/
	install -m 644 completions/redlock-cli.bash completions/_redlock-cli \
	    completions/redlock-cli.fish $(DISTDIR)/$(DISTNAME)/completions/
	awk '/^## / { n++ } n == 0 || /^### On a CI runner/ { p = 1 } \
	    /^##/ && !/^### On a CI runner/ && n > 0 { p = 0 } p' README.md \
	    >$(DISTDIR)/$(DISTNAME)/README
	cd $(DISTDIR) && tar --owner=0 --group=0 --numeric-owner --sort=name \
	    -czf $(DISTNAME).tar.gz $(DISTNAME) && rm -rf $(DISTNAME) && \
	    sha256sum $(DISTNAME).tar.gz >SHA256SUMS && cat SHA256SUMS

# make deb: the Debian package from debian/ (dpkg-buildpackage -us -uc -b,
# whose dh_auto_test is make check), built from a copy of the tree in
# build/deb/src; the .deb, build.log and lintian.txt land in build/deb/.
# Installs debhelper and lintian when missing, as make deps does.
DEB_DEPS = $(BUILD_DEPS) debhelper dpkg-dev lintian
DEBDIR	= build/deb
deb:
	@$(APT) $(DEB_DEPS)
	rm -rf $(DEBDIR) && mkdir -p $(DEBDIR)/src
	tar -cf - --exclude=./build --exclude=./.git --exclude=./tests/fuzz/bin \
	    --exclude=./bench/node/node_modules --exclude=./bench/out . | \
	    tar -xf - -C $(DEBDIR)/src
	cd $(DEBDIR)/src && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
	    { tail -n 40 ../build.log; echo "make deb: failed, see $(DEBDIR)/build.log"; exit 1; }
	rm -rf $(DEBDIR)/src
	lintian --fail-on error,warning $(DEBDIR)/*.changes >$(DEBDIR)/lintian.txt 2>&1; \
	    rc=$$?; cat $(DEBDIR)/lintian.txt; ls $(DEBDIR)/*.deb; exit $$rc

clean:
	rm -f $(BIN) $(UNIT_BIN) $(FLAGS_STAMP) $(OBJS) $(OBJS:.o=.d) $(call bp,src/sha1.o src/sha1.d) \
	    src/scripts-sha.h $(SHATOOL)
	rm -rf build/sanitize build/valgrind build/hiredis-static build/hiredis-shared build/dist

.PHONY: FORCE all deps demo-deps deps-check test check test-acl test-hiredis test-servers valgrind bench bench-deps \
	demo sanitize lint install uninstall dist deb clean

# libFuzzer targets (make fuzz; FUZZ_SECONDS per target) and the stress
# run with its history checker (make stress).
include tests/fuzz/fuzz.mk
-include tests/stress/stress.mk

# The model checker (tests/model/README.md): random schedules of every
# mode against real servers, under faults, checked against the contract.
# make model: 10 minutes with a random seed (printed), every nemesis;
# MODEL_SECONDS, MODEL_SEED, MODEL_SERVERS (1 or 3) and MODEL_NEMESIS
# (a comma list, all, or none) change it.
MODEL_SECONDS ?= 600
MODEL_SERVERS ?= 1
MODEL_NEMESIS ?= all
MODEL	= tests/model/check --binary $(BIN)
model: $(BIN)
	$(MODEL) --seconds $(MODEL_SECONDS) --servers $(MODEL_SERVERS) --all \
	    $(if $(filter-out none,$(MODEL_NEMESIS)),--nemesis $(MODEL_NEMESIS)) $(if $(MODEL_SEED),--seed $(MODEL_SEED))

# make model-ci: CI's leg, about 3 minutes: a fixed seed, then a random
# one (each prints its seed), each on one server and on a quorum of 3,
# with a mix of nemeses.  MODEL_CI_SEED, MODEL_CI_SECONDS (per run) and
# MODEL_CI_NEMESIS1/3 (one server / three) change it.  Every run goes on
# to the end; the target fails if any of them found a violation.
MODEL_CI_SEED ?= 20261205
MODEL_CI_SECONDS ?= 20
MODEL_CI_NEMESIS1 ?= kill,stop,force,restart
MODEL_CI_NEMESIS3 ?= kill,force,restart,proxy
model-ci: $(BIN)
	@rc=0; random=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); \
	for seed in $(MODEL_CI_SEED) $$random; do \
	    $(MODEL) --seconds $(MODEL_CI_SECONDS) --seed $$seed --servers 1 \
	        --nemesis $(MODEL_CI_NEMESIS1) --shrink-budget 30 || rc=1; \
	    $(MODEL) --seconds $(MODEL_CI_SECONDS) --seed $$seed --servers 3 \
	        --nemesis $(MODEL_CI_NEMESIS3) --shrink-budget 30 || rc=1; \
	done; \
	echo "make model-ci: seeds $(MODEL_CI_SEED) (fixed) and $$random (random): $$([ $$rc = 0 ] && echo no violation || echo VIOLATIONS above)"; \
	exit $$rc

# make model-net: CI's leg of the test network's nemeses (tests/net/, issue 39),
# about 2 minutes: seed MODEL_NET_SEED on one server and on a quorum of 3,
# MODEL_NET_SECONDS each, with partition, oneway, hang, slow and clock (on one
# server the clock's overlaps are counted as expected, not failures).  Where
# network namespaces cannot be made (not root, a sandbox) it says why in one
# line and succeeds.
MODEL_NET_SEED ?= 39
MODEL_NET_SECONDS ?= 40
MODEL_NET_NEMESIS ?= partition,oneway,hang,slow,clock
model-net: $(BIN)
	@why=$$(python3 tests/net/net.py can) || { echo "make model-net: skipped: $$why"; exit 0; }; \
	rc=0; for n in 1 3; do \
	    $(MODEL) --seconds $(MODEL_NET_SECONDS) --seed $(MODEL_NET_SEED) --servers $$n \
	        --nemesis $(MODEL_NET_NEMESIS) --all --shrink-budget 20 || rc=1; \
	done; exit $$rc
.PHONY: model model-ci model-net
