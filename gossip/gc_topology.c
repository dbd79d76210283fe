#include "gc_topology.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_parse.h"
#include "gc_rng.h"

typedef struct {
    uint32_t *items;
    size_t    count, cap;
} s_list_t;

struct gc_topology_t {
    uint32_t  n;
    s_list_t *out;
    s_list_t *in;
    bool      undirected;
    char      name [64];
};

static int
s_list_add (s_list_t *list, uint32_t v)
{
    for (size_t i = 0; i < list->count; i++)
        if (list->items [i] == v)
            return 0;
    if (list->count == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 4;
        uint32_t *items = realloc (list->items, cap * sizeof *items);
        if (!items)
            return -1;
        list->items = items;
        list->cap = cap;
    }
    list->items [list->count++] = v;
    return 0;
}

static int
s_cmp_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return (x > y) - (x < y);
}

//  Add from -> to (self-loops are ignored: a peer always mixes its own model).
static int
s_edge (gc_topology_t *self, uint32_t from, uint32_t to)
{
    if (from == to)
        return 0;
    if (s_list_add (&self->out [from], to) || s_list_add (&self->in [to], from))
        return -1;
    return 0;
}

static int
s_both (gc_topology_t *self, uint32_t a, uint32_t b)
{
    return s_edge (self, a, b) || s_edge (self, b, a) ? -1 : 0;
}

static int
s_build_torus (gc_topology_t *self, const char *shape, gc_err_t *err)
{
    uint32_t n = self->n, rows = 0, cols = 0;
    if (shape) {
        unsigned r, c;
        char extra;
        if (sscanf (shape, "%ux%u%c", &r, &c, &extra) != 2 || r == 0 || c == 0)
            return gc_err_set (err, GC_E_SPEC, "topology torus:%s: expected torus:RxC", shape);
        rows = r;
        cols = c;
        if ((uint64_t) rows * cols != n)
            return gc_err_set (err, GC_E_SPEC, "topology torus:%s has %u places but there are %u peers",
                               shape, rows * cols, n);
    }
    else {
        for (uint32_t r = (uint32_t) sqrt ((double) n); r >= 1; r--)
            if (n % r == 0) {
                rows = r;
                cols = n / r;
                break;
            }
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = i / cols, c = i % cols;
        if (s_both (self, i, r * cols + (c + 1) % cols)
        ||  s_both (self, i, ((r + 1) % rows) * cols + c))
            return gc_err_set (err, GC_E_NOMEM, "topology: out of memory");
    }
    snprintf (self->name, sizeof self->name, "torus:%ux%u", rows, cols);
    return 0;
}

//  Whether v already has neighbour w among its first used[v] (of D) slots.
static bool
s_adjacent (const uint32_t *adj, const uint32_t *used, long degree, uint32_t v, uint32_t w)
{
    for (uint32_t k = 0; k < used [v]; k++)
        if (adj [(size_t) v * (size_t) degree + k] == w)
            return true;
    return false;
}

//  One try of pairing free stubs a suitable pair at a time (Steger and
//  Wormald 1999): draw two free stubs until they belong to different peers
//  not yet joined, join them, repeat. Fills pair (n*D stubs, two a pair) and
//  returns true, or false when a draw finds no suitable pair (then retry).
//  Where the whole-shuffle rejection below almost never gives a simple
//  graph (D >= 5 on 16 peers: the chance falls like exp(-(D^2 - 1) / 4)),
//  this succeeds within a few tries.
static bool
s_pair_stubs (uint32_t n, long degree, gc_rng_t *rng, uint32_t *pair, uint32_t *adj,
              uint32_t *used, uint32_t *free_stub)
{
    size_t left = (size_t) n * (size_t) degree, made = 0;
    for (size_t s = 0; s < left; s++)
        free_stub [s] = (uint32_t) (s / (size_t) degree);
    memset (used, 0, n * sizeof *used);
    while (left > 0) {
        bool found = false;
        size_t i = 0, j = 0;
        for (size_t draw = 0; !found && draw < 64 * left; draw++) {
            i = gc_rng_below (rng, left);
            j = gc_rng_below (rng, left);
            uint32_t a = free_stub [i], b = free_stub [j];
            found = a != b && !s_adjacent (adj, used, degree, a, b);
        }
        if (!found)
            return false;
        uint32_t a = free_stub [i], b = free_stub [j];
        adj [(size_t) a * (size_t) degree + used [a]++] = b;
        adj [(size_t) b * (size_t) degree + used [b]++] = a;
        pair [made++] = a;
        pair [made++] = b;
        //  remove both stubs: the larger index first, so the swap keeps the other
        size_t hi = i > j ? i : j, lo = i > j ? j : i;
        free_stub [hi] = free_stub [--left];
        free_stub [lo] = free_stub [--left];
    }
    return true;
}

//  The fallback of s_build_regular: up to 100 tries of s_pair_stubs.
static int
s_build_regular_pairing (gc_topology_t *self, long degree, gc_rng_t *rng, gc_err_t *err)
{
    uint32_t n = self->n;
    size_t stubs = (size_t) n * (size_t) degree;
    uint32_t *pair = malloc (stubs * sizeof *pair), *adj = malloc (stubs * sizeof *adj);
    uint32_t *used = malloc (n * sizeof *used), *free_stub = malloc (stubs * sizeof *free_stub);
    int rc = -1;
    bool built = false;
    if (pair && adj && used && free_stub) {
        for (int attempt = 0; !built && attempt < 100; attempt++)
            built = s_pair_stubs (n, degree, rng, pair, adj, used, free_stub);
        rc = 0;
        for (size_t s = 0; built && rc == 0 && s < stubs; s += 2)
            rc = s_both (self, pair [s], pair [s + 1]);
    }
    free (pair);
    free (adj);
    free (used);
    free (free_stub);
    if (rc)
        return gc_err_set (err, GC_E_NOMEM, "topology: out of memory");
    if (!built)
        return gc_err_set (err, GC_E_SPEC, "topology regular:%ld: no simple graph found for %u peers",
                           degree, n);
    snprintf (self->name, sizeof self->name, "regular:%ld", degree);
    return 0;
}

//  Random D-regular graph: pair up n*D stubs at random, retry on self-loops
//  and double edges (configuration model with rejection); where that keeps
//  failing (large D on few peers), pair suitable stubs one at a time
//  (s_pair_stubs). The first method's graphs stay what they were for every
//  (n, D, seed) it could build.
static int
s_build_regular (gc_topology_t *self, long degree, uint64_t seed, gc_err_t *err)
{
    uint32_t n = self->n;
    if (degree < 1 || (uint32_t) degree >= n || ((uint64_t) n * (uint64_t) degree) % 2)
        return gc_err_set (err, GC_E_SPEC, "topology regular:%ld: need 1 <= D < %u and n*D even", degree, n);
    size_t stubs = (size_t) n * (size_t) degree;
    uint32_t *stub = malloc (stubs * sizeof *stub);
    if (!stub)
        return gc_err_set (err, GC_E_NOMEM, "topology: out of memory");
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0x70B0);
    for (int attempt = 0; attempt < 1000; attempt++) {
        for (size_t s = 0; s < stubs; s++)
            stub [s] = (uint32_t) (s / (size_t) degree);
        gc_rng_shuffle_u32 (&rng, stub, stubs);
        bool ok = true;
        for (size_t s = 0; ok && s < stubs; s += 2) {
            uint32_t a = stub [s], b = stub [s + 1];
            if (a == b)
                ok = false;
            for (size_t t = 0; ok && t < s; t += 2)
                if ((stub [t] == a && stub [t + 1] == b) || (stub [t] == b && stub [t + 1] == a))
                    ok = false;
        }
        if (!ok)
            continue;
        for (size_t s = 0; s < stubs; s += 2)
            if (s_both (self, stub [s], stub [s + 1])) {
                free (stub);
                return gc_err_set (err, GC_E_NOMEM, "topology: out of memory");
            }
        free (stub);
        snprintf (self->name, sizeof self->name, "regular:%ld", degree);
        return 0;
    }
    free (stub);
    return s_build_regular_pairing (self, degree, &rng, err);
}

static int
s_build_edges (gc_topology_t *self, const char *list, gc_err_t *err)
{
    const char *p = list;
    while (*p) {
        unsigned a, b;
        char op;
        int used = 0;
        if (sscanf (p, "%u%c%u%n", &a, &op, &b, &used) != 3 || (op != '-' && op != '>')
        ||  (p [used] != ',' && p [used] != '\0'))
            return gc_err_set (err, GC_E_SPEC, "topology edges: bad edge at '%.20s' (expected A-B or A>B)", p);
        if (a >= self->n || b >= self->n)
            return gc_err_set (err, GC_E_SPEC, "topology edge %u%c%u: peer index outside 0..%u", a, op, b, self->n - 1);
        if ((op == '-' ? s_both (self, a, b) : s_edge (self, a, b)))
            return gc_err_set (err, GC_E_NOMEM, "topology: out of memory");
        p += used + (p [used] == ',');
    }
    snprintf (self->name, sizeof self->name, "edges");
    return 0;
}

static int
s_build (gc_topology_t *self, const char *spec, uint64_t seed, gc_err_t *err)
{
    uint32_t n = self->n;
    const char *colon = strchr (spec, ':');
    size_t kind_len = colon ? (size_t) (colon - spec) : strlen (spec);
    const char *arg = colon ? colon + 1 : NULL;
    #define S_IS(word) (kind_len == strlen (word) && !strncmp (spec, word, kind_len))
    snprintf (self->name, sizeof self->name, "%.*s", (int) kind_len, spec);
    if (S_IS ("ring") && !arg) {
        for (uint32_t i = 0; i < n; i++)
            if (s_both (self, i, (i + 1) % n))
                return gc_err_set (err, GC_E_NOMEM, "topology: out of memory");
        return 0;
    }
    if (S_IS ("complete") && !arg) {
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                if (s_edge (self, i, j))
                    return gc_err_set (err, GC_E_NOMEM, "topology: out of memory");
        return 0;
    }
    if (S_IS ("exponential") && !arg) {
        for (uint32_t i = 0; i < n; i++)
            for (uint64_t hop = 1; hop < n; hop *= 2)
                if (s_edge (self, i, (uint32_t) ((i + hop) % n)))
                    return gc_err_set (err, GC_E_NOMEM, "topology: out of memory");
        return 0;
    }
    if (S_IS ("torus"))
        return s_build_torus (self, arg, err);
    if (S_IS ("regular") && arg) {
        long degree;
        if (gc_parse_long (arg, 1, 1 << 16, &degree, "topology regular degree", err))
            return -1;
        return s_build_regular (self, degree, seed, err);
    }
    if (S_IS ("edges") && arg)
        return s_build_edges (self, arg, err);
    #undef S_IS
    return gc_err_set (err, GC_E_SPEC, "topology '%s': expected ring, torus[:RxC], complete, exponential, "
                       "regular:D or edges:A-B,...", spec);
}

gc_topology_t *
gc_topology_new (const char *spec, uint32_t n, uint64_t seed, gc_err_t *err)
{
    if (n < 1 || n > GC_TOPOLOGY_MAX_PEERS) {
        gc_err_set (err, GC_E_RANGE, "topology: %u peers outside [1, %d]", n, GC_TOPOLOGY_MAX_PEERS);
        return NULL;
    }
    gc_topology_t *self = calloc (1, sizeof *self);
    if (self) {
        self->n = n;
        self->out = calloc (n, sizeof *self->out);
        self->in = calloc (n, sizeof *self->in);
    }
    if (!self || !self->out || !self->in) {
        gc_topology_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "topology: out of memory");
        return NULL;
    }
    if (s_build (self, spec ? spec : "", seed, err)) {
        gc_topology_destroy (&self);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (self->out [i].count)
            qsort (self->out [i].items, self->out [i].count, sizeof (uint32_t), s_cmp_u32);
        if (self->in [i].count)
            qsort (self->in [i].items, self->in [i].count, sizeof (uint32_t), s_cmp_u32);
    }
    self->undirected = true;
    for (uint32_t i = 0; i < n; i++) {
        for (size_t k = 0; k < self->out [i].count; k++)
            if (!gc_topology_has_edge (self, self->out [i].items [k], i))
                self->undirected = false;
    }
    return self;
}

void
gc_topology_destroy (gc_topology_t **self_p)
{
    gc_topology_t *self = *self_p;
    if (!self)
        return;
    for (uint32_t i = 0; self->out && i < self->n; i++)
        free (self->out [i].items);
    for (uint32_t i = 0; self->in && i < self->n; i++)
        free (self->in [i].items);
    free (self->out);
    free (self->in);
    free (self);
    *self_p = NULL;
}

uint32_t gc_topology_size (const gc_topology_t *self) { return self->n; }
bool gc_topology_undirected (const gc_topology_t *self) { return self->undirected; }
const char *gc_topology_name (const gc_topology_t *self) { return self->name; }

size_t
gc_topology_out (const gc_topology_t *self, uint32_t i, const uint32_t **list)
{
    *list = self->out [i].items;
    return self->out [i].count;
}

size_t
gc_topology_in (const gc_topology_t *self, uint32_t i, const uint32_t **list)
{
    *list = self->in [i].items;
    return self->in [i].count;
}

bool
gc_topology_has_edge (const gc_topology_t *self, uint32_t from, uint32_t to)
{
    const s_list_t *l = &self->out [from];
    return l->count && bsearch (&to, l->items, l->count, sizeof (uint32_t), s_cmp_u32) != NULL;
}

bool
gc_topology_connected (const gc_topology_t *self)
{
    //  strongly connected: everyone reachable from 0 forwards and backwards
    uint32_t *stack = malloc (self->n * sizeof *stack);
    uint8_t *seen = malloc (self->n);
    if (!stack || !seen) {
        free (stack);
        free (seen);
        return false;
    }
    bool connected = true;
    for (int pass = 0; pass < 2 && connected; pass++) {
        s_list_t *adj = pass ? self->in : self->out;
        memset (seen, 0, self->n);
        size_t top = 0, reached = 1;
        stack [top++] = 0;
        seen [0] = 1;
        while (top) {
            uint32_t v = stack [--top];
            for (size_t k = 0; k < adj [v].count; k++) {
                uint32_t w = adj [v].items [k];
                if (!seen [w]) {
                    seen [w] = 1;
                    reached++;
                    stack [top++] = w;
                }
            }
        }
        connected = reached == self->n;
    }
    free (stack);
    free (seen);
    return connected;
}

double
gc_topology_weight (const gc_topology_t *self, uint32_t i, uint32_t j)
{
    const s_list_t *in = &self->in [i];
    if (i == j) {
        double rest = 0;
        for (size_t k = 0; k < in->count; k++)
            rest += gc_topology_weight (self, i, in->items [k]);
        return 1.0 - rest;
    }
    if (!gc_topology_has_edge (self, j, i))
        return 0.0;
    if (!self->undirected)
        return 1.0 / (double) (in->count + 1);
    size_t di = in->count, dj = self->in [j].count;
    return 1.0 / (double) (1 + (di > dj ? di : dj));
}
