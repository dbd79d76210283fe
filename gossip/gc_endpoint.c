#include "gc_endpoint.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int
gc_endpoint_resolve (const char *endpoint, char *out, size_t size, gc_err_t *err)
{
    snprintf (out, size, "%s", endpoint);
    if (strncmp (endpoint, "tcp://", 6))
        return 0;
    const char *host = endpoint + 6, *colon = strrchr (host, ':');
    if (!colon || colon == host || *host == '[' || *host == '*')
        return 0;
    char name [256];
    size_t len = (size_t) (colon - host);
    if (len >= sizeof name)
        return 0;
    memcpy (name, host, len);
    name [len] = '\0';
    struct in_addr v4;
    if (inet_pton (AF_INET, name, &v4) == 1)
        return 0;
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
    int gai = getaddrinfo (name, NULL, &hints, &res);
    if (gai)
        return gc_err_set (err, gai == EAI_AGAIN ? GC_E_SYS : GC_E_CONFIG, "cannot resolve host '%s' (%s)", name,
                           gai_strerror (gai));
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        char addr [INET_ADDRSTRLEN];
        if (a->ai_family == AF_INET
        &&  inet_ntop (AF_INET, &((struct sockaddr_in *) a->ai_addr)->sin_addr, addr, sizeof addr)) {
            snprintf (out, size, "tcp://%s%s", addr, colon);
            break;
        }
    }
    freeaddrinfo (res);
    return 0;
}
