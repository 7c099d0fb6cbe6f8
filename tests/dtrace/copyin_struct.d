/*
 * Typed copyin(): the script declares the program's struct (as the
 * traced program lays it out), casts copyin(addr, size) to a pointer
 * to it and reads members through it: an int, a char array as a
 * string, a long, a nested struct's member, a bit-field, an array
 * element, and a member through a pointer read from the struct; a
 * typedef of it; sizeof and offsetof of it; *(int *)copyin(...);
 * copyinto() into alloca()'d memory.
 * cmd: $SONDE_PROGS/struct_target
 * source: Dynamic Tracing Guide, "Structs and Unions" (declarations,
 * -> and ., sizeof, offsetof), "Actions and Subroutines" (copyin,
 * copyinto, alloca), "User Process Tracing" (copyin of a user struct).
 */
#pragma D option quiet

struct pair {
	short a, b;
};

struct req {
	int id;
	char name[8];
	long val;
	struct pair pair;
	unsigned flag : 1;
	unsigned level : 3;
	int arr[2][2];
	struct req *next;
};

typedef struct req req_t;

pid$target::handle:entry
{
	this->r = (struct req *)copyin(arg0, sizeof (struct req));
	printf("%d %s %d\n", this->r->id, stringof(this->r->name),
	    this->r->val);
	printf("%d %d %d %d\n", this->r->pair.b, this->r->flag,
	    this->r->level, this->r->arr[1][0]);
	printf("%d %d\n", this->r->next->id, *(int *)copyin(arg0, 4));
	printf("%d %d %d\n", sizeof (struct req), sizeof (req_t),
	    offsetof(struct req, val));

	this->q = (req_t *)alloca(sizeof (req_t));
	copyinto(arg0, sizeof (req_t), this->q);
	printf("%s %d\n", stringof(this->q->name), this->q->pair.a);
	exit(0);
}
