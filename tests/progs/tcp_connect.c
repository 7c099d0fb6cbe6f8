/* tcp_connect - connect N times to 127.0.0.1 and to ::1 on a port
 * where nothing listens (discard, 9), so the kernel's TCP state
 * tracepoints fire with known addresses. Usage: tcp_connect [N] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static void try_connect(int family, const void *sa, socklen_t len)
{
	int fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return;
	connect(fd, sa, len);   /* refused: what matters is the attempt */
	close(fd);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	struct sockaddr_in v4 = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(9) };
	inet_pton(AF_INET, "127.0.0.1", &v4.sin_addr);
	inet_pton(AF_INET6, "::1", &v6.sin6_addr);
	for (int i = 0; i < n; i++) {
		try_connect(AF_INET, &v4, sizeof(v4));
		try_connect(AF_INET6, &v6, sizeof(v6));
	}
	return 0;
}
