/*
 * hidden.h - the mark of the CPU backend's functions shared between its
 * files and kept out of the library's exports.  Never installed.
 */
#ifndef NBG_CPU_HIDDEN_H
#define NBG_CPU_HIDDEN_H

#define CPU_HIDDEN __attribute__((visibility("hidden")))

#endif
