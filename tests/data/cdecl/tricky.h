/* tricky.h - hand-written layout cases for test_cdecl, checked against
 * gcc: padding, bitfields, packed/aligned, unions, anonymous members,
 * arrays, flexible arrays, enums, function pointers, typedefs. */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

struct t_pad { char a; int b; char c; long d; short e; };
struct t_ptrs { char c; void *p; int (*fn)(int, char *); char *(*arr[3])(void); };
struct t_arr { char a[3]; int m[2][3]; short s[5][1][2]; char tail; };
struct t_flex { int n; char c; long data[]; };
struct t_flex2 { char c; short data[]; };
struct t_bits1 { char a; int b : 3; int c : 30; unsigned d : 1; };
struct t_bits2 { unsigned a : 7; unsigned : 0; unsigned b : 3; unsigned char c : 2; };
struct t_bits3 { char a; long long b : 40; long long c : 30; char d; };
struct t_bits4 { short a : 9; short b : 9; char c : 3; _Bool f : 1; };
struct t_bits5 { char a; int : 4; char b; };
struct t_bits6 { char a; int : 0; char b; };
struct t_bits7 { uint8_t x : 4, y : 4; uint16_t z : 12; uint64_t w : 60; };
struct t_bits8 { int a : 1; enum { E1, E2 } e : 2; unsigned long f : 33; };
union t_union { char c; int i; long l; char s[13]; };
union t_ubits { int a : 3; char b; short c : 9; };
struct t_anon {
	int kind;
	union { int i; float f; struct { short lo, hi; }; };
	struct { char x; long y; } named;
	char after;
};
struct __attribute__((packed)) t_packed { char a; int b; long c; short d; };
struct t_packed2 { char a; int b; } __attribute__((packed));
struct t_packed_bits { char a; int b : 12; int c : 20; char d; } __attribute__((packed));
struct t_packed_member { char a; int b __attribute__((packed)); char c; long d; };
struct t_packed_inner { char a; struct t_pad in; } __attribute__((packed));
struct t_aligned { char a; int b __attribute__((aligned(16))); char c; };
struct t_aligned2 { char a; } __attribute__((aligned(32)));
struct t_aligned3 { char a; struct t_aligned2 b; char c; };
struct t_aligned4 { char a; long b __attribute__((__aligned__)); };
struct t_aligned_packed { char a; int b __attribute__((aligned(8))); } __attribute__((packed));
struct t_alignas { char a; _Alignas(8) char b; _Alignas(long double) char c; };
typedef int t_aint __attribute__((aligned(8)));
struct t_typedef_aligned { char a; t_aint b; char c; };
enum t_enum_small { S1 = 1, S2 = 2 };
enum t_enum_neg { N1 = -1, N2 = 5 };
enum t_enum_big { B1 = 0x100000000 };
enum __attribute__((packed)) t_enum_packed { P1 = 1, P2 = 200 };
enum __attribute__((packed)) t_enum_packed2 { Q1 = -1, Q2 = 300 };
struct t_enums { char c; enum t_enum_small s; enum t_enum_big b; enum t_enum_packed p; enum t_enum_packed2 q; };
struct t_types { _Bool b; char c; signed char sc; unsigned char uc; short s; unsigned short us;
	int i; unsigned u; long l; unsigned long ul; long long ll; unsigned long long ull;
	float f; double d; long double ld; __int128 i128; unsigned __int128 u128;
	int8_t i8; uint16_t u16; int32_t i32; uint64_t u64; size_t sz; intptr_t ip; };
struct t_const { const char *s; volatile int v; const volatile unsigned long cv; char *const p; };
typedef struct { int a; char b; } t_anon_typedef;
typedef struct t_named_td { long a; char b[3]; } t_named_td_t, *t_named_td_p;
struct t_uses_typedefs { t_anon_typedef a; t_named_td_t b; t_named_td_p c; char d; };
struct t_nested { struct t_inner { char x; double y; } in; struct t_inner arr[2]; int z; };
struct t_self { struct t_self *next; struct t_self *prev; int v; };
struct t_empty { };
struct t_empty_member { char a; struct t_empty e; int b; };
#define T_N 4
#define T_M (T_N * 2 + 1)
struct t_macro_sizes { char a[T_N]; int b[T_M]; char c[sizeof(int) * 3]; char d[__alignof__(long)]; char e[(T_N > 2) ? 5 : 7]; };
enum t_counted { C_A, C_B = 10, C_C, C_COUNT };
struct t_enum_sizes { int v[C_COUNT]; char w[C_B]; };
struct t_va { int n; __builtin_va_list ap; };
struct t_fnptrs { void (*cb)(void *); int (*(*pp)[2])(void); char c; };
struct t_mode { int a __attribute__((mode(QI))); int b __attribute__((__mode__(__HI__))); char c; };
union t_union_aligned { char c; int i __attribute__((aligned(16))); };
struct t_union_in { char c; union t_union_aligned u; char d; };
struct t_deep { struct { struct { struct { char a; long b; } l3; char c; } l2; char d; } l1; char e; };
struct t_bits_cross { unsigned a : 20; unsigned b : 20; unsigned c : 20; unsigned long long d : 50; unsigned e : 14; };
struct t_char_bits { char a : 3; char b : 6; char c : 7; char d : 8; };
typedef float t_v4sf __attribute__((vector_size(16)));
typedef int t_v8si __attribute__((__vector_size__(32), __aligned__(16)));
struct t_vectors { char c; t_v4sf a; t_v8si b; double d __attribute__((vector_size(64))); };
