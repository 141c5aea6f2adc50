# SPDX-License-Identifier: MIT
# The linker's output of a STATIC=1 link, less glibc's three known
# warnings: libc.a says at every static link that dlopen, getaddrinfo and
# gethostbyname need the shared libraries of the same glibc at run time.
# None does here (the Makefile's STATIC comment says why), and a warning
# that every build prints teaches people to read past warnings.  Each
# comes as two lines, "ld: OBJ: in function `F':" then "...: warning:
# Using 'SYM' in statically linked applications ..."; both go.  Every
# other line, another warning included, is printed as it came.
/: in function `[^']*':$/ {
	if (held != "")
		print held
	held = $0
	next
}
/warning: Using '(dlopen|getaddrinfo|gethostbyname)' in statically linked applications requires at runtime the shared libraries from the glibc version used for linking$/ {
	held = ""
	next
}
{
	if (held != "")
		print held
	held = ""
	print
}
END {
	if (held != "")
		print held
}
