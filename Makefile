# SplitFS: make (library + CLI), make check (unit tests, no root), make test,
# make demo, make bench, make install / make uninstall (PREFIX, DESTDIR,
# LIBDIR, ...: see below).
# make V=1 shows commands; make SANITIZE=address,undefined builds into build-san/,
# make SANITIZE=thread into build-tsan/ (the C tests too: tests/suites/tsan.sh).

# The one place the version is kept: splitfs_version(), `splitfs version`,
# the library's soname (libsplitfs.so.MAJOR) and file name, splitfs.pc.
VERSION := 0.1.0
SONAME := libsplitfs.so.$(firstword $(subst ., ,$(VERSION)))
CC ?= gcc
SANITIZE ?=
comma := ,
BUILD ?= $(if $(filter thread,$(subst $(comma), ,$(SANITIZE))),build-tsan,$(if $(SANITIZE),build-san,build))

CFLAGS ?= -O2 -g
override CFLAGS += -std=c11 -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes \
	-Wno-missing-field-initializers -fno-strict-aliasing -DSFS_VERSION='"$(VERSION)"' -MMD -MP
ifneq ($(SANITIZE),)
override CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
override LDFLAGS += -fsanitize=$(SANITIZE)
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

LIB_SRC := $(wildcard src/*.c src/*/*.c)
CLI_SRC := $(wildcard cli/*.c) src/util/options.c src/util/crc32c.c src/util/msg.c \
	src/oplog/recover.c src/oplog/format.c src/staging/adopt.c src/util/names.c \
	src/util/dirscan.c
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/lib/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/cli/%.o)

all: $(BUILD)/libsplitfs.so $(BUILD)/splitfs

$(BUILD)/obj/lib/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

$(BUILD)/obj/cli/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libsplitfs.so: $(LIB_OBJ) src/libsplitfs.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-z,defs -Wl,--version-script=src/libsplitfs.map \
		-Wl,-soname,$(SONAME) $(LDFLAGS) -o $@ $(LIB_OBJ) -ldl -lpthread

$(BUILD)/splitfs: $(CLI_OBJ)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(BUILD)/inst/libpath.d

clean:
	rm -rf build build-san build-tsan build-clang

.PHONY: all clean

# --- tests -------------------------------------------------------------------
TEST_SRC := $(filter-out tests/c/helpers.c,$(wildcard tests/c/*.c))
TEST_BIN := $(TEST_SRC:tests/c/%.c=$(BUILD)/tests/%)
TEST_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -pthread \
	$(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer)

$(BUILD)/tests/%: tests/c/%.c tests/c/helpers.c tests/c/helpers.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< tests/c/helpers.c -ldl

# A test too big for one file keeps its parts in tests/c/NAME/ (errno_diff).
ERRNO_DIFF_SRC := $(wildcard tests/c/errno_diff/*.c)
$(BUILD)/tests/errno_diff: tests/c/errno_diff.c $(ERRNO_DIFF_SRC) tests/c/errno_diff/probes.h \
		tests/c/helpers.c tests/c/helpers.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ tests/c/errno_diff.c $(ERRNO_DIFF_SRC) tests/c/helpers.c -ldl

# The crash harness's workload runner and checker (tests/crash/).
CRASH_SRC := $(wildcard tests/crash/*.c)
# It shares tests/c/helpers.c (t_read_fd) with the C tests.
$(BUILD)/crash/crashtool: $(CRASH_SRC) tests/crash/crash.h tests/c/helpers.c tests/c/helpers.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $(CRASH_SRC) tests/c/helpers.c -ldl

# The attacker's tool of the security suite (tests/security/).
$(BUILD)/security/plant: tests/security/plant.c src/oplog/format.c src/oplog/recover.c \
		src/util/crc32c.c src/util/names.c src/util/dirscan.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $^

# Slow-kernel shims some C tests preload after the library (tests/shim/):
# no sanitizer (they run under the sanitized library's runtime).
SHIM_SRC := $(wildcard tests/shim/*.c)
SHIM_LIB := $(SHIM_SRC:tests/shim/%.c=$(BUILD)/shim/%.so)
$(BUILD)/shim/%.so: tests/shim/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -std=c11 -O1 -Wall -Wextra -Werror -fPIC -shared -o $@ $< -ldl

tests: all $(TEST_BIN) $(SHIM_LIB) $(BUILD)/crash/crashtool $(BUILD)/security/plant

# Installs what the suites need (packages, fsx, pjdfstest), then runs them.
test:
	./tests/deps.sh
	$(MAKE) tests
	$(MAKE) check
	./tests/run.sh

# Everything on persistent memory in the lab's guest (tests/suites/dax.sh,
# powercut-pmem.sh): every suite with its default knobs, 100 power cuts per
# mode (POWERCUT_CUTS). Hours on 2 cores; `make test` runs a bounded part.
test-dax:
	./tests/deps.sh
	$(MAKE) tests
	DAX_FULL=1 POWERCUT_CUTS=$${POWERCUT_CUTS:-100} SFS_TEST_TIMEOUT=$${SFS_TEST_TIMEOUT:-25200} \
		./tests/run.sh dax powercut-pmem

# SQLite's own test suite (tests/suites/apps-sqlite-tcl.sh), natively and in
# every mode: about 35 minutes on 2 cores, so not part of `make test`.
test-sqlite:
	./tests/deps.sh
	$(MAKE) tests
	SFS_SQLITE_TCL=1 ./tests/run.sh apps-sqlite-tcl

# Installs what is missing, builds, and runs a real workload with and
# without SplitFS on the default file system (see demo/demo.sh).
demo:
	./tests/deps.sh
	$(MAKE) all
	./demo/demo.sh

.PHONY: tests test test-dax test-sqlite demo

# --- unit tests (make check) ---------------------------------------------------
# tests/unit/*.c: one program per module, linked against that module's objects
# (compiled as for the CLI, not the preload library), so nothing is
# interposed: no root, no image, no managed file system. tests/unit/run.sh
# runs them (NAMES=... for some); SANITIZE=... builds them into build-san/.
# tests/unit/layering.sh checks the library's layers (nm of its objects).
UNIT_HELPERS := tests/unit/unit.c tests/unit/logcraft.c
UNIT_SRC := $(filter-out $(UNIT_HELPERS),$(wildcard tests/unit/*.c))
UNIT_NAMES := $(UNIT_SRC:tests/unit/%.c=%)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit/%)
UNIT_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes \
	-Wno-missing-field-initializers -fno-strict-aliasing -MMD -MP \
	$(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer)
unit_obj = $(1:%.c=$(BUILD)/obj/cli/%.o)
UNIT_RECOVER := $(call unit_obj,src/oplog/recover.c src/oplog/format.c src/util/crc32c.c \
	src/util/names.c src/util/dirscan.c cli/libc_sys.c) \
	$(BUILD)/obj/unit/logcraft.o

# The objects of src/ each test links besides unit.o (a test not listed
# links none; crc32c and logformat include the source they test).
$(BUILD)/unit/options: $(call unit_obj,src/util/options.c src/util/msg.c)
$(BUILD)/unit/msg: $(call unit_obj,src/util/msg.c)
$(BUILD)/unit/logformat: $(call unit_obj,src/oplog/format.c src/util/crc32c.c src/util/names.c \
	src/util/dirscan.c)
$(BUILD)/unit/maptab: $(call unit_obj,src/map/maptab.c)
$(BUILD)/unit/ntcopy: $(call unit_obj,src/util/ntcopy.c)
$(BUILD)/unit/reserve: $(call unit_obj,src/staging/reserve.c)
$(BUILD)/unit/pagereport: $(call unit_obj,src/util/pagereport.c)
$(BUILD)/unit/pieces: $(call unit_obj,src/relink/pieces.c)
$(BUILD)/unit/recover: $(UNIT_RECOVER)
$(BUILD)/unit/recover_trust: $(UNIT_RECOVER)

$(BUILD)/obj/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(UNIT_CFLAGS) -c $< -o $@

$(BUILD)/unit/%: $(BUILD)/obj/unit/%.o $(BUILD)/obj/unit/unit.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^)

-include $(wildcard $(BUILD)/obj/unit/*.d) \
	$(filter-out $(CLI_OBJ:.o=.d),$(wildcard $(BUILD)/obj/cli/src/*/*.d))

# The test objects stay (make would drop them as intermediates).
.SECONDARY: $(UNIT_SRC:tests/unit/%.c=$(BUILD)/obj/unit/%.o) \
	$(UNIT_HELPERS:tests/unit/%.c=$(BUILD)/obj/unit/%.o)

# layering.sh (no program: a script) reads the library's objects.
check: $(UNIT_BIN) $(BUILD)/libsplitfs.so
	$(Q)SFS_UNIT_DIR=$(BUILD)/unit SFS_BUILD=$(BUILD) ./tests/unit/run.sh \
		$(or $(NAMES),$(UNIT_NAMES) layering)

.PHONY: check

# --- tree hygiene (run by .ci/run) ---------------------------------------------
# format: lays out every C/C++ file by .clang-format; format-check fails on
# any file it would change. history-check: commit subjects of at most 72
# columns, each with a body (commits since tests/history-check.sh came).
format:
	$(Q)./tests/format-check.sh --fix

format-check:
	$(Q)./tests/format-check.sh

history-check:
	$(Q)./tests/history-check.sh

.PHONY: format format-check history-check

# --- benchmarks (bench/) --------------------------------------------------------
BENCH_SRC := $(wildcard bench/src/*.c)
BENCH_CXX_SRC := $(wildcard bench/src/*.cc)
BENCH_BIN := $(BENCH_SRC:bench/src/%.c=$(BUILD)/bench/%) $(BENCH_CXX_SRC:bench/src/%.cc=$(BUILD)/bench/%)

# Each C program links what they share (bench/src/lib/bench.c).
BENCH_LIB := bench/src/lib/bench.c
BENCH_LIB_DEPS := $(BENCH_LIB) bench/src/lib/bench.h

$(BUILD)/bench/%: bench/src/%.c $(BENCH_LIB_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -pthread -o $@ $< $(BENCH_LIB) -lm

# The machine's primitives (bench/machine.sh): the library's own CRC32C and
# libpmem2 (libpmem2-dev, tests/deps.sh).
$(BUILD)/bench/primitives: bench/src/primitives.c src/util/crc32c.c src/util/crc32c.h $(BENCH_LIB_DEPS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -o $@ bench/src/primitives.c src/util/crc32c.c \
		$(BENCH_LIB) -lpmem2

# C++ drivers of applications (YCSB on LevelDB: libleveldb-dev, bench/deps.sh).
$(BUILD)/bench/%: bench/src/%.cc
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CXX     $@")
	$(Q)$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -pthread -o $@ $< -lleveldb

bench-progs: $(BENCH_BIN)

# The whole benchmark (about an hour) and a quick pass (under 5 minutes).
# deps.sh first: the C++ drivers need Debian's LevelDB headers.
bench: all
	./bench/deps.sh
	$(MAKE) bench-progs
	./bench/run.sh

bench-quick: all
	./bench/deps.sh
	$(MAKE) bench-progs
	./bench/run.sh --quick

.PHONY: bench bench-quick bench-progs

# --- install -------------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=] [BINDIR= LIBDIR= INCLUDEDIR= MANDIR=
# PKGCONFIGDIR=], and make uninstall with the same variables. DESTDIR only
# stages the files; PREFIX and the directories are where they will be used,
# and the installed CLI is compiled with BINDIR and LIBDIR (cli/libpath.c),
# in its own copy: build/splitfs stays the build tree's.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL ?= install

INST := $(BUILD)/inst
INST_VARS := PREFIX=$(PREFIX) BINDIR=$(BINDIR) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR) \
	VERSION=$(VERSION)

# Rewritten only when the install paths change, so a later `make install`
# with another PREFIX rebuilds what has them compiled in (git's GIT-CFLAGS).
$(INST)/paths: FORCE
	@mkdir -p $(dir $@)
	@echo '$(INST_VARS)' | cmp -s - $@ || echo '$(INST_VARS)' >$@

$(INST)/libpath.o: cli/libpath.c $(INST)/paths
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS) -DSFS_BINDIR='"$(BINDIR)"' -DSFS_LIBDIR='"$(LIBDIR)"' \
		-DSFS_SONAME='"$(SONAME)"' -c $< -o $@

$(INST)/splitfs: $(filter-out %/cli/libpath.o,$(CLI_OBJ)) $(INST)/libpath.o
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

$(INST)/splitfs.pc: splitfs.pc.in $(INST)/paths
	@$(if $(Q),echo "  GEN     $@")
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' $< >$@

# Built by `make` too, so `make && sudo make install` compiles nothing as root.
all: $(INST)/splitfs $(INST)/splitfs.pc

install: $(BUILD)/libsplitfs.so $(INST)/splitfs $(INST)/splitfs.pc
	@$(if $(Q),echo "  INSTALL $(DESTDIR)$(PREFIX)")
	$(Q)$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	$(Q)$(INSTALL) -m 644 $(BUILD)/libsplitfs.so $(DESTDIR)$(LIBDIR)/libsplitfs.so.$(VERSION)
	$(Q)ln -sf libsplitfs.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	$(Q)ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libsplitfs.so
	$(Q)$(INSTALL) -m 755 $(INST)/splitfs $(DESTDIR)$(BINDIR)/splitfs
	$(Q)$(INSTALL) -m 644 include/splitfs.h $(DESTDIR)$(INCLUDEDIR)/splitfs.h
	$(Q)$(INSTALL) -m 644 $(INST)/splitfs.pc $(DESTDIR)$(PKGCONFIGDIR)/splitfs.pc
	$(Q)$(INSTALL) -m 644 man/splitfs.1 $(DESTDIR)$(MANDIR)/man1/splitfs.1
	$(Q)$(INSTALL) -m 644 man/libsplitfs.7 $(DESTDIR)$(MANDIR)/man7/libsplitfs.7

# Files only: the directories may hold other packages' files.
uninstall:
	@$(if $(Q),echo "  UNINST  $(DESTDIR)$(PREFIX)")
	$(Q)rm -f $(DESTDIR)$(LIBDIR)/libsplitfs.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) \
		$(DESTDIR)$(LIBDIR)/libsplitfs.so $(DESTDIR)$(BINDIR)/splitfs \
		$(DESTDIR)$(INCLUDEDIR)/splitfs.h $(DESTDIR)$(PKGCONFIGDIR)/splitfs.pc \
		$(DESTDIR)$(MANDIR)/man1/splitfs.1 $(DESTDIR)$(MANDIR)/man7/libsplitfs.7

FORCE:

.PHONY: install uninstall FORCE
