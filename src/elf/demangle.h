/* demangle.h - C++ (Itanium ABI) symbol demangling for the elf part. */
#ifndef SONDE_ELF_DEMANGLE_H
#define SONDE_ELF_DEMANGLE_H

/* The demangled form of MANGLED ("_ZN1a1bEi" -> "a::b(int)"), malloc'd,
 * or NULL when MANGLED is not a C++ name or no demangler is available
 * (then callers show the raw name). Thread-safe after the first call. */
char *elf_demangle(const char *mangled);

#endif
