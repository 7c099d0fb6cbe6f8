/* agent_util.c - the agent's private memory (anonymous mappings: the
 * target's heap is the target's) and its reading of /proc/self/maps. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../runtime/rt.h"
#include "agent.h"

/* /proc/self/maps of a big process is megabytes; past this it is not
 * worth tracing through it. */
#define MAPS_TEXT_MAX (64u << 20)

void *agent_alloc(size_t size)
{
	if (!size)
		size = 1;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void agent_free(void *p, size_t size)
{
	if (p)
		munmap(p, size ? size : 1);
}

static int read_all(int fd, char **text, size_t *len, size_t *cap)
{
	*cap = 1 << 16;
	*len = 0;
	*text = agent_alloc(*cap);
	if (!*text)
		return -ENOMEM;
	for (;;) {
		if (*len + 4096 + 1 > *cap) {
			if (*cap >= MAPS_TEXT_MAX)
				return -E2BIG;
			char *bigger = agent_alloc(*cap * 2);
			if (!bigger)
				return -ENOMEM;
			rt_memcpy(bigger, *text, *len);
			agent_free(*text, *cap);
			*text = bigger;
			*cap *= 2;
		}
		ssize_t n = read(fd, *text + *len, *cap - *len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		*len += (size_t)n;
	}
	(*text)[*len] = '\0';
	return 0;
}

static uint64_t hex(const char **p)
{
	uint64_t v = 0;
	for (;; (*p)++) {
		char c = **p;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

static uint64_t dec(const char **p)
{
	uint64_t v = 0;
	while (**p >= '0' && **p <= '9')
		v = v * 10 + (uint64_t)(*(*p)++ - '0');
	return v;
}

/* "start-end perms offset major:minor inode   path" */
static bool parse_line(char *line, struct agent_map *m)
{
	const char *p = line;
	m->start = hex(&p);
	if (*p++ != '-')
		return false;
	m->end = hex(&p);
	if (*p++ != ' ' || !p[0] || !p[1] || !p[2] || !p[3])
		return false;
	m->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	p += 4;
	if (*p++ != ' ')
		return false;
	m->offset = hex(&p);
	if (*p++ != ' ')
		return false;
	m->dev_major = (uint32_t)hex(&p);
	if (*p++ != ':')
		return false;
	m->dev_minor = (uint32_t)hex(&p);
	if (*p++ != ' ')
		return false;
	m->inode = dec(&p);
	while (*p == ' ')
		p++;
	m->path = p;
	return m->end > m->start;
}

int agent_maps_read(struct agent_maps *m)
{
	rt_memset(m, 0, sizeof(*m));
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len, cap;
	int r = read_all(fd, &m->text, &len, &cap);
	close(fd);
	m->text_bytes = cap;
	if (r < 0) {
		agent_maps_free(m);
		return r;
	}
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += m->text[i] == '\n';
	m->v_bytes = (lines + 1) * sizeof(*m->v);
	m->v = agent_alloc(m->v_bytes);
	if (!m->v) {
		agent_maps_free(m);
		return -ENOMEM;
	}
	char *line = m->text;
	while (*line) {
		char *nl = line;
		while (*nl && *nl != '\n')
			nl++;
		bool more = *nl == '\n';
		*nl = '\0';
		if (m->n <= lines && parse_line(line, &m->v[m->n]))
			m->n++;
		if (!more)
			break;
		line = nl + 1;
	}
	return 0;
}

void agent_maps_free(struct agent_maps *m)
{
	if (!m)
		return;
	agent_free(m->v, m->v_bytes);
	agent_free(m->text, m->text_bytes);
	rt_memset(m, 0, sizeof(*m));
}
