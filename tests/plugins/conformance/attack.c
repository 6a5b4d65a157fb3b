// An attacker's program, run from a plugin's process by the conformance
// suite (suite/tests/conformance/processes.rs): each attack prints one line,
// `NAME breached` when it got through or `NAME held <errno name>` when the
// sandbox stopped it, and controls print `NAME works` or `NAME broken`.
//
// usage: attack HOST_PID TCP_PORT UDP_PORT UNIX_SOCKET_PATH INHERITED_FD DIR
// DIR is a folder the plugin may write (its write grant).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

static void report(const char *name, int breached) {
  if (breached)
    printf("%s breached\n", name);
  else
    printf("%s held %s\n", name, strerrorname_np(errno) ? strerrorname_np(errno) : "?");
}

static struct sockaddr_in loopback(int port) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

static int connect_tcp(int protocol, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, protocol);
  if (fd < 0) return 0;
  struct sockaddr_in addr = loopback(port);
  int ok = connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
  close(fd);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: attack HOST_PID TCP_PORT UDP_PORT UNIX_PATH FD DIR\n");
    return 2;
  }
  pid_t host = atoi(argv[1]);
  int tcp_port = atoi(argv[2]), udp_port = atoi(argv[3]);
  const char *unix_path = argv[4];
  int inherited = atoi(argv[5]);
  const char *dir = argv[6];
  char path[4096];

  // Device nodes in a write grant: the kernel log (1:11) and a disk.
  snprintf(path, sizeof path, "%s/kmsg", dir);
  errno = 0;
  report("mknod_char", mknod(path, S_IFCHR | 0600, makedev(1, 11)) == 0);
  snprintf(path, sizeof path, "%s/disk", dir);
  errno = 0;
  report("mknod_block", mknod(path, S_IFBLK | 0600, makedev(254, 0)) == 0);

  // The controlling terminal, and pushing input into any terminal.
  errno = 0;
  int tty = open("/dev/tty", O_RDWR);
  report("controlling_terminal", tty >= 0);
  int pushed = 0;
  char c = 'x';
  for (int fd = 0; fd < 3; fd++) pushed |= ioctl(fd, TIOCSTI, &c) == 0;
  if (tty >= 0) pushed |= ioctl(tty, TIOCSTI, &c) == 0;
  errno = 0;
  report("tiocsti", pushed || ioctl(0, TIOCSTI, &c) == 0);

  // The host's limits, priority, CPUs and I/O class.
  struct rlimit one = {1, 1};
  errno = 0;
  report("prlimit_host", prlimit(host, RLIMIT_CPU, &one, NULL) == 0);
  errno = 0;
  report("renice_host", setpriority(PRIO_PROCESS, host, 19) == 0);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(0, &cpus);
  errno = 0;
  report("taskset_host", sched_setaffinity(host, sizeof cpus, &cpus) == 0);
  errno = 0;
  report("ionice_host", syscall(SYS_ioprio_set, 1, host, (3 << 13)) == 0);
  errno = 0;
  report("signal_host", kill(host, 0) == 0);

  // A descriptor the host inherited from whoever started it.
  char secret[64] = {0};
  errno = 0;
  report("inherited_descriptor", pread(inherited, secret, sizeof secret - 1, 0) > 0);

  // The network: MPTCP and plain TCP to a loopback listener, raw sockets,
  // UDP, a Unix socket with a path, netlink.
  errno = 0;
  report("mptcp", connect_tcp(IPPROTO_MPTCP, tcp_port));
  errno = 0;
  report("tcp", connect_tcp(0, tcp_port));
  errno = 0;
  int raw = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
  report("raw_socket", raw >= 0);
  errno = 0;
  int udp = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in to = loopback(udp_port);
  report("udp", udp >= 0 && sendto(udp, "forged", 6, 0, (struct sockaddr *)&to, sizeof to) == 6);
  errno = 0;
  int un = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  strncpy(addr.sun_path, unix_path, sizeof addr.sun_path - 1);
  report("unix_socket", un >= 0 && connect(un, (struct sockaddr *)&addr, sizeof addr) == 0);
  errno = 0;
  report("netlink", socket(AF_NETLINK, SOCK_RAW, 0) >= 0);

  // Privileges: capabilities held, new namespaces, mounts, the host name,
  // the session keyring, the kernel log.
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {0};
  int held = syscall(SYS_capget, &header, data) == 0 &&
             (data[0].effective | data[0].permitted | data[1].effective | data[1].permitted);
  for (int cap = 0; cap < 64; cap++) held |= prctl(PR_CAPBSET_READ, cap) == 1;
  errno = 0;
  report("capabilities", held);
  errno = 0;
  report("no_new_privs_missing", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1);
  errno = 0;
  report("unshare", unshare(CLONE_NEWUSER) == 0 || unshare(CLONE_NEWNS) == 0);
  errno = 0;
  report("mount", mount("none", dir, "tmpfs", 0, NULL) == 0);
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  errno = 0;
  report("sethostname", sethostname(name, strlen(name)) == 0);
  errno = 0;
  report("keyring", syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3 /* SESSION */, 0) >= 0);
  char log[64];
  errno = 0;
  report("kernel_log", syscall(SYS_syslog, 3 /* READ_ALL */, log, sizeof log) > 0);

  // Controls: what every process needs still works.
  int pair[2];
  printf("socketpair %s\n", socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0 ? "works" : "broken");
  const char *tmp = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/scratch", tmp ? tmp : "/nonexistent");
  FILE *scratch = fopen(path, "w");
  printf("tmpdir %s %s\n", scratch && fputs("x", scratch) >= 0 ? "works" : "broken", tmp ? tmp : "-");
  if (scratch) fclose(scratch);
  snprintf(path, sizeof path, "%s/fifo", dir);
  printf("fifo %s\n", mkfifo(path, 0600) == 0 ? "works" : "broken");
  return 0;
}
