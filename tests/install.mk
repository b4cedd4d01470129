# tests/install.mk -- make installcheck (and so make distcheck): the
# installed headers and library as a user has them.
#
# Only the installed bf16emu.pc is visible to pkg-config (PKG_CONFIG_LIBDIR
# is its folder; after make install DESTDIR=D, PKG_CONFIG_SYSROOT_DIR=D
# puts D before its paths).  Each installed header is compiled alone, by
# its base name, with the project's warning flags, and
# tests/install/use_bf16emu.c, which calls one function of each layer, is
# compiled and linked with nothing but pkg-config --cflags --libs bf16emu,
# then run.

EXTRA_DIST += tests/install/use_bf16emu.c
CLEANFILES += tests/install/use_bf16emu$(EXEEXT) \
	tests/install/header.c tests/install/header.o

installcheck-local:
	@$(MKDIR_P) tests/install; \
	cflags=`PKG_CONFIG_LIBDIR='$(DESTDIR)$(pkgconfigdir)' \
	  PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)' \
	  $(PKG_CONFIG) --cflags bf16emu` || exit 1; \
	libs=`PKG_CONFIG_LIBDIR='$(DESTDIR)$(pkgconfigdir)' \
	  PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)' \
	  $(PKG_CONFIG) --libs bf16emu` || exit 1; \
	echo "installcheck: pkg-config --cflags --libs bf16emu: $$cflags $$libs"; \
	for h in $(pkginclude_HEADERS); do \
	  b=`basename $$h`; \
	  echo "#include <$$b>" >tests/install/header.c; \
	  $(CC) $(PROJECT_CFLAGS) $(WARN_CFLAGS) $(CFLAGS) $$cflags \
	    -c tests/install/header.c -o tests/install/header.o || { \
	    echo "installcheck: FAIL: <$$b> does not compile alone"; exit 1; }; \
	done; \
	echo "installcheck: each installed header compiles alone"; \
	$(CC) $(PROJECT_CFLAGS) $(WARN_CFLAGS) $(CFLAGS) $$cflags \
	  $(srcdir)/tests/install/use_bf16emu.c \
	  -o tests/install/use_bf16emu$(EXEEXT) $(LDFLAGS) $$libs || exit 1; \
	LD_LIBRARY_PATH='$(DESTDIR)$(libdir)'$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH} \
	  ./tests/install/use_bf16emu$(EXEEXT) || exit 1; \
	rm -f tests/install/header.c tests/install/header.o \
	  tests/install/use_bf16emu$(EXEEXT)
