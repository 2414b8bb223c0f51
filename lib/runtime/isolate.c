/*
 * isolate.c - vendor calls in a child process: a crash, an exit() or a
 * hang inside a vendor library becomes an error naming the call and the
 * signal, never the end of the caller.  The child never outlives the
 * caller's interest in it: it dies with the thread that forked it
 * (PR_SET_PDEATHSIG), the signal guards pass SIGINT/SIGTERM/SIGHUP on to it
 * (guard.c), and it carries its own time limit, so a caller that is gone or
 * stopped does not leave it holding the NPU.  Also the pointer
 * plausibility check applied to whatever a vendor library returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/guard.h"
#include "common/internal.h"
#include "runtime/runtime_internal.h"

/* How long the child's own limit runs past the caller's: the caller
 * normally stops it first and names the call; the child's limit is for a
 * caller that is stopped or cannot act.  SIGALRM at the limit, SIGKILL one
 * grace later for a vendor library that catches or blocks SIGALRM. */
#define CHILD_GRACE_MS 1000u

static char local_crumb[64];
static char *crumb = local_crumb;

void nbg_rt_crumb(const char *call)
{
	/* Plain stores into shared memory: the parent reads them after the
	 * child is gone, so no ordering beyond program order is needed. */
	snprintf(crumb, sizeof(local_crumb), "%s", call);
}

void nbg_rt_shared_free(nbg_rt_shared_head *shared, size_t size)
{
	if (shared)
		munmap(shared, size);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

enum { CHILD_LATE, CHILD_ENDED, CHILD_STOPPED };

/* SIGINT, SIGTERM, SIGHUP: what a terminal, a service manager or a
 * subprocess time-out sends, never what a crash raises. */
static int termination(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/* Waits for pid up to timeout_ms, asking stop at every wake-up (a signal
 * interrupts the nap): CHILD_ENDED and *status, CHILD_LATE on time-out,
 * CHILD_STOPPED when stop said so.  stop is asked first, and again when a
 * termination signal ended the child, so a Ctrl-C that reached both
 * processes is the caller's stop, not a failure of the run. */
static int wait_child(pid_t pid, uint32_t timeout_ms, nbg_rt_stop stop, int *status, int *reaped)
{
	double deadline = now_ms() + (double)timeout_ms;
	unsigned nap_us = 200;
	for (;;) {
		if (stop.fn && stop.fn(stop.ctx))
			return CHILD_STOPPED;
		pid_t r = waitpid(pid, status, WNOHANG);
		*reaped = r == pid || (r < 0 && errno != EINTR); /* the latter cannot happen for
								   our own child: treat as gone */
		if (r == pid && WIFSIGNALED(*status) && termination(WTERMSIG(*status)) && stop.fn &&
		    stop.fn(stop.ctx))
			return CHILD_STOPPED;
		if (*reaped)
			return CHILD_ENDED;
		if (now_ms() >= deadline)
			return CHILD_LATE;
		struct timespec ts = { 0, (long)nap_us * 1000 };
		nanosleep(&ts, NULL);
		if (nap_us < 20000)
			nap_us *= 2;
	}
}

static const char *signal_abbrev(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SEGV";
	case SIGBUS: return "BUS";
	case SIGABRT: return "ABRT";
	case SIGILL: return "ILL";
	case SIGFPE: return "FPE";
	case SIGKILL: return "KILL";
	case SIGTERM: return "TERM";
	case SIGTRAP: return "TRAP";
	case SIGSYS: return "SYS";
	case SIGPIPE: return "PIPE";
	case SIGALRM: return "ALRM";
	case SIGINT: return "INT";
	case SIGHUP: return "HUP";
	default: return "?";
	}
}

/* A timer of this process that sends sig after ms (alarm() where timers
 * cannot be made). */
static void arm(int sig, uint64_t ms)
{
	struct sigevent ev;
	timer_t t;

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = sig;
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) == 0) {
		struct itimerspec its;
		memset(&its, 0, sizeof(its));
		its.it_value.tv_sec = (time_t)(ms / 1000);
		its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
		timer_settime(t, 0, &its, NULL);
	} else if (sig == SIGALRM) {
		alarm((unsigned)((ms + 999) / 1000));
	}
}

/* The child's ties to its parent, first thing after fork: it dies with the
 * parent (SIGKILL when the thread that forked it ends; a parent already gone
 * before the prctl is seen by getppid), the termination signals end it
 * (unless ignored) instead of running the caller's handlers, and its own
 * timers end it after limit_ms + CHILD_GRACE_MS whatever the parent does. */
static void child_ties(pid_t parent, uint64_t limit_ms)
{
	static const int term[] = { SIGINT, SIGTERM, SIGHUP };
	sigset_t set;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(term) / sizeof(term[0]); i++) {
		struct sigaction old;
		sigaddset(&set, term[i]);
		if (sigaction(term[i], NULL, &old) == 0 &&
		    ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_IGN))
			signal(term[i], SIG_DFL);
	}
	signal(SIGALRM, SIG_DFL);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	arm(SIGALRM, limit_ms + CHILD_GRACE_MS);
	arm(SIGKILL, limit_ms + 2 * CHILD_GRACE_MS);
}

static const char *call_of(const nbg_rt_shared_head *h)
{
	return h->call[0] ? h->call : "(before the first vendor call)";
}

nbg_code nbg_rt_isolate(int isolate, size_t shared_size, uint32_t timeout_ms, nbg_rt_stop stop,
			nbg_rt_child_fn fn, void *arg, nbg_rt_shared_head **shared_out,
			nbg_error *err)
{
	*shared_out = NULL;
	if (shared_size < sizeof(nbg_rt_shared_head))
		shared_size = sizeof(nbg_rt_shared_head);
	nbg_rt_shared_head *h = mmap(NULL, shared_size, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED)
		return nbg_rt_fail(err, NBG_E_OUT_OF_MEMORY, -1,
				   "cannot map %zu bytes shared with the runtime process", shared_size);
	*shared_out = h;
	if (!isolate) {
		crumb = h->call;
		fn(h, arg);
		crumb = local_crumb;
		return NBG_OK;
	}
	uint32_t limit = timeout_ms ? timeout_ms : 600000u;
	pid_t parent = getpid();
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0)
		return nbg_error_io(err, errno, 0, "", "cannot fork the runtime process");
	if (pid == 0) {
		/* The child: tied to the parent's life and its own limit, vendor
		 * chatter on stdout goes to stderr, and a fatal signal ends it (a
		 * handler the caller installed must not resume a crashed vendor
		 * call). */
		child_ties(parent, limit);
		dup2(STDERR_FILENO, STDOUT_FILENO);
		static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS };
		for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], SIG_DFL);
		crumb = h->call;
		fn(h, arg);
		nbg_rt_crumb("(done)");
		fflush(NULL);
		_exit(h->done ? 0 : 125);
	}
	int status = 0, reaped = 0, slot = nbg_guard_child_add(pid);
	int how = wait_child(pid, limit, stop, &status, &reaped);
	if (!reaped)
		kill(pid, SIGKILL);
	nbg_guard_child_remove(slot); /* before the reaping: a handler waits for a registered pid */
	while (!reaped && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (how == CHILD_STOPPED)
		return nbg_rt_fail(err, NBG_E_INTERRUPTED, -1,
				   "the run was stopped by the caller inside %s; its process was ended",
				   call_of(h));
	if (how == CHILD_LATE)
		return nbg_rt_fail(err, NBG_E_RUN_TIMEOUT, -1,
				   "the runtime did not finish within %u ms; it was stopped inside %s",
				   limit, call_of(h));
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		return nbg_rt_fail(err, NBG_E_RUN_TIMEOUT, -1,
				   "the runtime did not finish within %u ms; it ended itself at its own "
				   "limit (%u ms) inside %s, this process having been held up",
				   limit, limit + CHILD_GRACE_MS, call_of(h));
	if (WIFSIGNALED(status) && termination(WTERMSIG(status)))
		return nbg_rt_fail(err, NBG_E_INTERRUPTED, -1,
				   "the runtime process was ended by signal %d (SIG%s) inside %s: sent "
				   "by another process or the terminal, not a crash",
				   WTERMSIG(status), signal_abbrev(WTERMSIG(status)), call_of(h));
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		return nbg_rt_fail(err, NBG_E_RUNTIME_CRASHED, -1,
				   "the vendor library crashed inside %s: signal %d (SIG%s, %s)",
				   call_of(h), sig, signal_abbrev(sig), strsignal(sig));
	}
	if (!h->done || (WIFEXITED(status) && WEXITSTATUS(status) != 0))
		return nbg_rt_fail(err, NBG_E_RUNTIME_CRASHED, -1,
				   "the vendor library ended the process inside %s (exit status %d)",
				   call_of(h), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return NBG_OK;
}

/* ------------------------------------------------------------ plausibility */

static int readable(int wfd, int rfd, const void *p, size_t n)
{
	char sink[64];
	ssize_t w;
	do
		w = write(wfd, p, n);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return errno == EFAULT ? 0 : 1; /* anything but EFAULT says nothing: trust it */
	while (w > 0) {
		ssize_t r = read(rfd, sink, (size_t)w < sizeof(sink) ? (size_t)w : sizeof(sink));
		if (r <= 0)
			break;
		w -= r;
	}
	return 1;
}

int nbg_rt_plausible(const void *p, size_t n, size_t align)
{
	uintptr_t a = (uintptr_t)p;
	if (a < 4096 || (align > 1 && a % align) || (n && a + n - 1 < a))
		return 0;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
		return 1; /* cannot check here; the isolation still catches a crash */
	int ok = 1;
	if (n) {
		const uint8_t *b = p;
		size_t step = 4096, last = n - 1;
		if (n <= 65536) {
			for (size_t off = 0; ok && off <= last; off += step)
				ok = readable(fds[1], fds[0], b + off, 1);
		} else {
			ok = readable(fds[1], fds[0], b, 1);
		}
		if (ok)
			ok = readable(fds[1], fds[0], b + last, 1);
	}
	close(fds[0]);
	close(fds[1]);
	return ok;
}
