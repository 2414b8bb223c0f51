/*
 * guard.c - the process-level guards a program that reads untrusted files
 * installs once (nbg_install_signal_guards; nbg_install_sigbus_guard for
 * the SIGBUS guard alone, in a process whose termination signals are its
 * own, such as an interpreter):
 *
 * SIGBUS.  A mapped input that another process truncates turns every later
 * access past the new end into SIGBUS, which kills the process.  Every
 * mapping nbg_map_file makes is registered here; the handler, on a fault
 * inside a registered mapping, maps anonymous zero pages over the rest of it
 * (mmap MAP_FIXED, a plain system call) and marks the mapping changed.  The
 * faulting instruction then re-runs and reads zeros, whichever thread it is
 * on (the parser's or the whole-file hash thread), nothing unwinds and
 * nothing leaks; the caller asks nbg_mapping_changed() afterwards and drops
 * whatever it computed (NBG_E_FILE_CHANGED).  A fault anywhere else goes to
 * the handler that was there before (by default: the process dies as it
 * would have).
 *
 * SIGINT, SIGTERM, SIGHUP.  A runtime child process is registered while it
 * runs (nbg_guard_child_add, by isolate.c).  The handler passes the signal
 * on to every registered child and waits, bounded, until each has ended (a
 * child that ignores it gets SIGKILL after a second): a vendor call in a
 * child does not outlive the program holding the NPU.  It then lets the
 * signal take its previous course: a handler the program installed before
 * (nbg's removes the temporaries of its outputs), by default the end of
 * the process.  Signals that were ignored when the guards were installed
 * stay ignored.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/guard.h"

#define MAP_SLOTS 256

static struct map_slot {
	uintptr_t base; /* atomic; 0 = free */
	size_t len;
	int changed;    /* atomic */
} maps[MAP_SLOTS];

/* Runtime children at once: one session or probe at a time per process. */
#define CHILD_SLOTS 16

static pid_t children[CHILD_SLOTS]; /* atomic; 0 = free */

static size_t page_size = 4096;
static struct sigaction old_bus, old_term[3];
static const int term_signals[3] = { SIGINT, SIGTERM, SIGHUP };
static int installed, bus_installed; /* atomic */

void nbg_guard_map_add(const void *base, size_t len)
{
	for (size_t i = 0; i < MAP_SLOTS; i++) {
		uintptr_t zero = 0;
		if (__atomic_load_n(&maps[i].base, __ATOMIC_RELAXED))
			continue;
		/* Claim with a sentinel, fill in, then publish the base. */
		if (!__atomic_compare_exchange_n(&maps[i].base, &zero, (uintptr_t)1, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		maps[i].len = len;
		__atomic_store_n(&maps[i].changed, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&maps[i].base, (uintptr_t)base, __ATOMIC_RELEASE);
		return;
	}
	/* More than MAP_SLOTS mappings at once: this one is unguarded. */
}

static struct map_slot *find_map(const void *base)
{
	for (size_t i = 0; i < MAP_SLOTS; i++)
		if (__atomic_load_n(&maps[i].base, __ATOMIC_ACQUIRE) == (uintptr_t)base)
			return &maps[i];
	return NULL;
}

int nbg_guard_map_remove(const void *base)
{
	struct map_slot *s = base ? find_map(base) : NULL;
	int changed;

	if (!s)
		return 0;
	changed = __atomic_load_n(&s->changed, __ATOMIC_RELAXED);
	__atomic_store_n(&s->base, (uintptr_t)0, __ATOMIC_RELEASE);
	return changed;
}

int nbg_mapping_changed(const nbg_mapping *m)
{
	struct map_slot *s = m && m->priv_base && m->priv_len ? find_map(m->priv_base) : NULL;

	return s ? __atomic_load_n(&s->changed, __ATOMIC_RELAXED) : 0;
}

/* Passes a signal on to the disposition that was there before. */
static void chain(const struct sigaction *old, int sig, siginfo_t *si, void *uc)
{
	if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
		old->sa_sigaction(sig, si, uc);
	} else if (old->sa_handler == SIG_IGN) {
		return;
	} else if (old->sa_handler != SIG_DFL && old->sa_handler) {
		old->sa_handler(sig);
	} else {
		/* Default action: restore it and let the signal happen again (a
		 * fault re-runs the access on return; a termination signal is
		 * raised, delivered once this handler returns). */
		signal(sig, SIG_DFL);
		if (sig != SIGBUS || !si || si->si_code == SI_USER || si->si_code == SI_TKILL)
			raise(sig);
	}
}

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	int e = errno;

	for (size_t i = 0; i < MAP_SLOTS; i++) {
		uintptr_t base = __atomic_load_n(&maps[i].base, __ATOMIC_ACQUIRE);
		if (base <= 1 || a < base || a - base >= maps[i].len)
			continue;
		uintptr_t page = a & ~(uintptr_t)(page_size - 1);
		uintptr_t end = (base + maps[i].len + page_size - 1) & ~(uintptr_t)(page_size - 1);
		if (mmap((void *)page, end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0) != MAP_FAILED) {
			__atomic_store_n(&maps[i].changed, 1, __ATOMIC_RELAXED);
			errno = e;
			return;
		}
		break;
	}
	errno = e;
	chain(&old_bus, sig, si, uc);
}

int nbg_guard_child_add(pid_t pid)
{
	for (int i = 0; i < CHILD_SLOTS; i++) {
		pid_t zero = 0;
		if (__atomic_compare_exchange_n(&children[i], &zero, pid, 0, __ATOMIC_RELEASE,
						 __ATOMIC_RELAXED))
			return i;
	}
	return -1;
}

void nbg_guard_child_remove(int slot)
{
	if (slot >= 0 && slot < CHILD_SLOTS)
		__atomic_store_n(&children[slot], 0, __ATOMIC_RELEASE);
}

/* 1 while pid, a child of this process, has not ended.  WNOWAIT leaves an
 * ended child for the code that forked it to reap; waitid is a plain
 * system call, safe in a handler. */
static int child_running(pid_t pid)
{
	siginfo_t si;

	si.si_pid = 0;
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0;
}

/* sig to every registered child, then up to 2 s (SIGKILL after 1 s) until
 * each has ended. */
static void end_children(int sig)
{
	int any = 0;

	for (int i = 0; i < CHILD_SLOTS; i++) {
		pid_t p = __atomic_load_n(&children[i], __ATOMIC_ACQUIRE);
		if (p > 0 && kill(p, sig) == 0)
			any = 1;
	}
	for (int t = 0; any && t < 200; t++) {
		any = 0;
		for (int i = 0; i < CHILD_SLOTS; i++) {
			pid_t p = __atomic_load_n(&children[i], __ATOMIC_ACQUIRE);
			if (p <= 0 || !child_running(p))
				continue;
			any = 1;
			if (t == 100)
				kill(p, SIGKILL);
		}
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		if (any)
			nanosleep(&ts, NULL); /* async-signal-safe */
	}
}


static void on_term(int sig, siginfo_t *si, void *uc)
{
	int e = errno;

	end_children(sig);
	errno = e;
	for (int i = 0; i < 3; i++)
		if (term_signals[i] == sig)
			chain(&old_term[i], sig, si, uc);
}

int nbg_guard_installed(void)
{
	return __atomic_load_n(&bus_installed, __ATOMIC_ACQUIRE);
}

nbg_code nbg_install_sigbus_guard(void)
{
	struct sigaction sa;
	long ps = sysconf(_SC_PAGESIZE);

	if (__atomic_exchange_n(&bus_installed, 1, __ATOMIC_ACQ_REL))
		return NBG_OK;
	if (ps > 0)
		page_size = (size_t)ps;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sa.sa_sigaction = on_bus;
	return sigaction(SIGBUS, &sa, &old_bus) == 0 ? NBG_OK : NBG_E_IO;
}

nbg_code nbg_install_signal_guards(void)
{
	struct sigaction sa;

	if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
		return NBG_OK;
	if (nbg_install_sigbus_guard() != NBG_OK)
		return NBG_E_IO;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_term;
	sa.sa_flags = SA_SIGINFO;
	for (int i = 0; i < 3; i++) {
		if (sigaction(term_signals[i], NULL, &old_term[i]) != 0)
			return NBG_E_IO;
		if (!(old_term[i].sa_flags & SA_SIGINFO) && old_term[i].sa_handler == SIG_IGN)
			continue; /* e.g. SIGHUP under nohup */
		if (sigaction(term_signals[i], &sa, NULL) != 0)
			return NBG_E_IO;
	}
	return NBG_OK;
}
