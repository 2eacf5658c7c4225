/* `getent hosts NAME...` for any libc: the tests build it with musl-gcc -static, so
 * that names are looked up through musl's getaddrinfo (its resolv.conf reading, search
 * list and stop rules), as in an Alpine pod. Prints "ADDRESS NAME" per address like
 * getent; exits 2 when a name does not resolve. */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
	int rc = 0;
	if (argc < 3 || strcmp(argv[1], "hosts") != 0) {
		fprintf(stderr, "usage: getent hosts NAME...\n");
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		                          .ai_flags = AI_CANONNAME };
		struct addrinfo *res;
		int ret = getaddrinfo(argv[i], NULL, &hints, &res);
		if (ret != 0) {
			fprintf(stderr, "%s: %s\n", argv[i], gai_strerror(ret));
			rc = 2;
			continue;
		}
		for (struct addrinfo *p = res; p != NULL; p = p->ai_next) {
			char buf[INET6_ADDRSTRLEN];
			void *a = (p->ai_family == AF_INET6) ?
			          (void *)&((struct sockaddr_in6 *)p->ai_addr)->sin6_addr :
			          (void *)&((struct sockaddr_in *)p->ai_addr)->sin_addr;
			inet_ntop(p->ai_family, a, buf, sizeof(buf));
			printf("%-15s %s\n", buf, res->ai_canonname ? res->ai_canonname : argv[i]);
		}
		freeaddrinfo(res);
	}
	return rc;
}
