/*
 * isolate.c - vendor calls in a child process: a crash, an exit() or a
 * hang inside a vendor library becomes an error naming the call and the
 * signal, never the end of the caller.  Also the pointer plausibility
 * check applied to whatever a vendor library returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/internal.h"
#include "runtime/runtime_internal.h"

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

/* Waits for pid up to timeout_ms; 1 and *status when it ended, 0 on time-out. */
static int wait_child(pid_t pid, uint32_t timeout_ms, int *status)
{
	double deadline = now_ms() + (double)timeout_ms;
	unsigned nap_us = 200;
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return 1; /* cannot happen for our own child; treat as ended */
		if (now_ms() >= deadline)
			return 0;
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
	default: return "?";
	}
}

static const char *call_of(const nbg_rt_shared_head *h)
{
	return h->call[0] ? h->call : "(before the first vendor call)";
}

nbg_code nbg_rt_isolate(int isolate, size_t shared_size, uint32_t timeout_ms, nbg_rt_child_fn fn,
			void *arg, nbg_rt_shared_head **shared_out, nbg_error *err)
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
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0)
		return nbg_error_io(err, errno, 0, "", "cannot fork the runtime process");
	if (pid == 0) {
		/* The child: vendor chatter on stdout goes to stderr, and a fatal
		 * signal ends it (a handler the caller installed must not resume
		 * a crashed vendor call). */
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
	int status = 0;
	if (!wait_child(pid, timeout_ms ? timeout_ms : 600000u, &status)) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		return nbg_rt_fail(err, NBG_E_RUN_TIMEOUT, -1,
				   "the runtime did not finish within %u ms; it was stopped inside %s",
				   timeout_ms ? timeout_ms : 600000u, call_of(h));
	}
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
