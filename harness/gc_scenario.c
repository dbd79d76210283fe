#include "gc_scenario.h"

#include <czmq.h>
#include <math.h>
#include <string.h>

#include "gc_config.h"
#include "gc_engine.h"
#include "gc_parse.h"
#include "gc_robust.h"
#include "gc_topology.h"
#include "gc_wire_reason.h"

#define S_PATH_MAX 256

//  Keys the runner writes itself (per peer, from where the network runs).
static const char *s_reserved [] = {
    "node/index", "node/key", "node/bind", "node/metrics", "node/control",
    "node/final_model", "node/checkpoint_dir"
};

//  Keys every peer of one network must share (docs/CONFIG.md, Notes).
static const char *s_common [] = {
    "node/network", "node/seed", "topology/kind", "train/model", "train/split", "train/rounds"
};

//  What an assertion can measure (gc_report.c computes them).
static const char *s_metrics [] = {
    "honest_mean_accuracy", "honest_min_accuracy", "consensus_distance", "honest_crashes",
    "min_rounds", "accepted_from_untrusted", "events_not_fired", "rejected_total",
    "rounds_to_target", "time_to_target_s", "mb_to_target", "rounds_redone"
};

static const struct {
    const char  *name;
    gc_action_t  action;
} s_actions [] = {
    { "kill", GC_ACT_KILL }, { "term", GC_ACT_TERM }, { "stop", GC_ACT_STOP },
    { "cont", GC_ACT_CONT }, { "restart", GC_ACT_RESTART }, { "drop", GC_ACT_DROP },
    { "delay", GC_ACT_DELAY }, { "partition", GC_ACT_PARTITION }, { "heal", GC_ACT_HEAL },
    { "slow", GC_ACT_SLOW }, { "rate", GC_ACT_RATE }
};
#define S_NACTIONS (sizeof s_actions / sizeof s_actions [0])

static const char *s_cmp_names [] = { ">=", ">", "<=", "<", "==", "!=" };

typedef struct {
    gc_scenario_t *self;
    const char    *file;
    gc_err_t      *err;
    uint32_t       max_peers;       /* gcnet: GC_SCENARIO_MAX_PEERS; gcsim: GC_PEERSET_MAX */
    uint32_t       n_peers;         /* gcsim --peers: overrides scenario/peers */
} s_ctx_t;

//  "file: key: message" from a printf-style message.
static int
s_error (s_ctx_t *ctx, const char *key, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
static int
s_error (s_ctx_t *ctx, const char *key, const char *fmt, ...)
{
    char msg [GC_ERR_MSG_MAX];
    va_list args;
    va_start (args, fmt);
    vsnprintf (msg, sizeof msg, fmt, args);
    va_end (args);
    return gc_err_set (ctx->err, 1, "%s: %s: %s", ctx->file, key, msg);
}

const char *
gc_action_name (gc_action_t action)
{
    for (size_t i = 0; i < S_NACTIONS; i++)
        if (s_actions [i].action == action)
            return s_actions [i].name;
    return "?";
}

const char *
gc_cmp_name (gc_cmp_t cmp)
{
    return (size_t) cmp < sizeof s_cmp_names / sizeof s_cmp_names [0] ? s_cmp_names [cmp] : "?";
}

bool
gc_cmp_holds (gc_cmp_t cmp, double measured, double limit)
{
    if (!isfinite (measured))
        return false;                   /* not measured never passes */
    switch (cmp) {
        case GC_CMP_GE: return measured >= limit;
        case GC_CMP_GT: return measured > limit;
        case GC_CMP_LE: return measured <= limit;
        case GC_CMP_LT: return measured < limit;
        case GC_CMP_EQ: return measured == limit;
        case GC_CMP_NE: return measured != limit;
    }
    return false;
}

bool
gc_scenario_key_reserved (const char *path)
{
    if (!strncmp (path, "peers/", 6) || !strcmp (path, "peers"))
        return true;
    for (size_t i = 0; i < sizeof s_reserved / sizeof s_reserved [0]; i++)
        if (!strcmp (path, s_reserved [i]))
            return true;
    return false;
}

static bool
s_common_key (const char *path)
{
    for (size_t i = 0; i < sizeof s_common / sizeof s_common [0]; i++)
        if (!strcmp (path, s_common [i]))
            return true;
    return false;
}

//  Values are written back into ZPL between double quotes: refuse what
//  cannot be written back unchanged.
static int
s_check_value (s_ctx_t *ctx, const char *key, const char *value)
{
    for (const char *p = value; *p; p++)
        if (*p == '"' || (unsigned char) *p < 0x20)
            return s_error (ctx, key, "the value holds a quote or a control character");
    if (strlen (value) > 4000)
        return s_error (ctx, key, "the value is longer than 4000 characters");
    return 0;
}

static int
s_add_setting (s_ctx_t *ctx, gc_setting_t **list, size_t *n, const char *prefix,
               const char *path, const char *value)
{
    char key [S_PATH_MAX * 2];
    snprintf (key, sizeof key, "%s%s", prefix, path);
    if (gc_scenario_key_reserved (path))
        return s_error (ctx, key, "set by gcnet for each peer; a scenario cannot set it%s",
                        !strncmp (path, "peers", 5) ? " (scenario/peers is the number of peers)" : "");
    if (s_check_value (ctx, key, value))
        return -1;
    //  Type and range checks of gcnode itself, on a scratch configuration.
    gc_config_t *cfg = gc_config_new ();
    if (!cfg)
        return s_error (ctx, key, "out of memory");
    gc_err_t cerr = { 0 };
    int rc = gc_config_set (cfg, path, value, &cerr);
    gc_config_destroy (&cfg);
    if (rc)
        return gc_err_set (ctx->err, 1, "%s: %s%s", ctx->file, prefix, cerr.msg);
    gc_setting_t *grown = realloc (*list, (*n + 1) * sizeof **list);
    if (!grown)
        return s_error (ctx, key, "out of memory");
    *list = grown;
    grown [*n].path = strdup (path);
    grown [*n].value = strdup (value);
    (*n)++;
    if (!grown [*n - 1].path || !grown [*n - 1].value)
        return s_error (ctx, key, "out of memory");
    return 0;
}

//  Every leaf under node is one gcnode key (its path below the section).
static int
s_walk_settings (s_ctx_t *ctx, zconfig_t *node, const char *path, const char *prefix,
                 gc_setting_t **list, size_t *n)
{
    const char *value = zconfig_value (node);
    if (!zconfig_child (node))
        return s_add_setting (ctx, list, n, prefix, path, value ? value : "");
    if (value && *value)
        return s_error (ctx, path, "has both a value and sub-keys");
    for (zconfig_t *c = zconfig_child (node); c; c = zconfig_next (c)) {
        char sub [S_PATH_MAX];
        int len = snprintf (sub, sizeof sub, "%s/%s", path, zconfig_name (c));
        if (len < 0 || (size_t) len >= sizeof sub)
            return s_error (ctx, path, "key path too long");
        if (s_walk_settings (ctx, c, sub, prefix, list, n))
            return -1;
    }
    return 0;
}

static const char *
s_leaf (zconfig_t *node)
{
    const char *v = zconfig_value (node);
    return v ? v : "";
}

static int
s_only_leaves (s_ctx_t *ctx, zconfig_t *section, const char *path)
{
    for (zconfig_t *c = zconfig_child (section); c; c = zconfig_next (c))
        if (zconfig_child (c))
            return s_error (ctx, path, "'%s' has sub-keys; expected name = value", zconfig_name (c));
    return 0;
}

static int
s_parse_scenario_section (s_ctx_t *ctx, zconfig_t *section)
{
    gc_scenario_t *self = ctx->self;
    if (s_only_leaves (ctx, section, "scenario"))
        return -1;
    for (zconfig_t *c = zconfig_child (section); c; c = zconfig_next (c)) {
        const char *name = zconfig_name (c), *value = s_leaf (c);
        char key [S_PATH_MAX];
        snprintf (key, sizeof key, "scenario/%s", name);
        gc_err_t perr = { 0 };
        int rc = 0;
        if (s_check_value (ctx, key, value))
            return -1;
        if (!strcmp (name, "name")) {
            free (self->name);
            self->name = strdup (value);
            if (!*value)
                return s_error (ctx, key, "empty");
        }
        else
        if (!strcmp (name, "description")) {
            free (self->description);
            self->description = strdup (value);
        }
        else
        if (!strcmp (name, "peers")) {
            long n;
            rc = gc_parse_long (value, 1, ctx->max_peers, &n, key, &perr);
            self->n_peers = (uint32_t) n;
        }
        else
        if (!strcmp (name, "timeout_s"))
            rc = gc_parse_double (value, 1, 7 * 86400, &self->timeout_s, key, &perr);
        else
        if (!strcmp (name, "target_accuracy"))
            rc = gc_parse_double (value, 0, 1, &self->target_accuracy, key, &perr);
        else
        if (!strcmp (name, "grace_s"))
            rc = gc_parse_double (value, 0, 3600, &self->grace_s, key, &perr);
        else
        if (!strcmp (name, "base_port")) {
            long port;
            rc = gc_parse_long (value, 0, 65535 - GC_SCENARIO_MAX_PEERS, &port, key, &perr);
            self->base_port = (int) port;
            if (rc == 0 && port > 0 && port < 1024)
                return s_error (ctx, key, "%ld is a privileged port (use 1024 or more, or 0)", port);
        }
        else
            return s_error (ctx, key, "unknown key (expected name, description, peers, timeout_s, "
                            "target_accuracy, grace_s or base_port)");
        if (rc)
            return gc_err_set (ctx->err, 1, "%s: %s", ctx->file, perr.msg);
    }
    return 0;
}

//  One comma-separated item of a peer set: N, A-B, or a name.
static int
s_peer_item (const gc_scenario_t *self, const char *item, gc_peerset_t *out, const char *what,
             gc_err_t *err)
{
    if (!*item)
        return gc_err_set (err, GC_E_PARSE, "%s: empty item in the peer list", what);
    if (*item >= '0' && *item <= '9') {
        char buf [64];
        snprintf (buf, sizeof buf, "%s", item);
        char *dash = strchr (buf, '-');
        if (dash)
            *dash = '\0';
        long lo, hi;
        long max = (long) self->n_peers - 1;
        char label [S_PATH_MAX + 32];
        snprintf (label, sizeof label, "%s: peer", what);
        if (gc_parse_long (buf, 0, max, &lo, label, err))
            return gc_err_prefix (err, "(there are %u peers) ", self->n_peers);
        hi = lo;
        if (dash && gc_parse_long (dash + 1, lo, max, &hi, label, err))
            return gc_err_prefix (err, "(there are %u peers) ", self->n_peers);
        for (long i = lo; i <= hi; i++)
            gc_peerset_add (out, (uint32_t) i);
        return 0;
    }
    if (!strcmp (item, "all")) {
        gc_peerset_t all;
        gc_peerset_all (&all, self->n_peers);
        gc_peerset_union (out, &all);
        return 0;
    }
    if (!strcmp (item, "byzantine") || !strcmp (item, "honest")) {
        bool byz = !strcmp (item, "byzantine");
        for (uint32_t i = 0; i < self->n_peers; i++)
            if (gc_peerset_has (&self->byzantine, i) == byz)
                gc_peerset_add (out, i);
        return 0;
    }
    for (size_t g = 0; g < self->n_groups; g++)
        if (!strcmp (self->groups [g].name, item)) {
            gc_peerset_union (out, &self->groups [g].peers);
            return 0;
        }
    return gc_err_set (err, GC_E_PARSE, "%s: '%s' is not a peer index, range, group, all, honest or byzantine",
                       what, item);
}

int
gc_scenario_peers (const gc_scenario_t *self, const char *text, gc_peerset_t *out, const char *what,
                   gc_err_t *err)
{
    gc_peerset_clear (out);
    char *copy = strdup (text ? text : "");
    if (!copy)
        return gc_err_set (err, GC_E_NOMEM, "%s: out of memory", what);
    int rc = 0;
    bool any = false;
    char *rest = copy;
    for (char *item = strsep (&rest, ","); item && rc == 0; item = strsep (&rest, ",")) {
        while (*item == ' ')
            item++;
        char *end = item + strlen (item);
        while (end > item && end [-1] == ' ')
            *--end = '\0';
        rc = s_peer_item (self, item, out, what, err);
        any = true;
    }
    free (copy);
    if (rc == 0 && !any)
        return gc_err_set (err, GC_E_PARSE, "%s: no peers given", what);
    return rc;
}

static int
s_parse_groups (s_ctx_t *ctx, zconfig_t *section)
{
    gc_scenario_t *self = ctx->self;
    for (zconfig_t *g = zconfig_child (section); g; g = zconfig_next (g)) {
        const char *gname = zconfig_name (g);
        char gpath [S_PATH_MAX];
        snprintf (gpath, sizeof gpath, "group/%s", gname);
        if (!zconfig_child (g))
            return s_error (ctx, gpath, "a group needs peers = ... and the keys it sets");
        if (!strcmp (gname, "all") || !strcmp (gname, "honest") || !strcmp (gname, "byzantine")
        ||  (*gname >= '0' && *gname <= '9'))
            return s_error (ctx, gpath, "a group name cannot be a number, all, honest or byzantine");
        for (size_t i = 0; i < self->n_groups; i++)
            if (!strcmp (self->groups [i].name, gname))
                return s_error (ctx, gpath, "defined twice");
        gc_group_t *grown = realloc (self->groups, (self->n_groups + 1) * sizeof *grown);
        if (!grown)
            return s_error (ctx, gpath, "out of memory");
        self->groups = grown;
        gc_group_t *group = &self->groups [self->n_groups++];
        memset (group, 0, sizeof *group);
        group->name = strdup (gname);
        if (!group->name)
            return s_error (ctx, gpath, "out of memory");
        bool has_peers = false;
        char prefix [S_PATH_MAX + 2];
        snprintf (prefix, sizeof prefix, "%s/", gpath);
        for (zconfig_t *c = zconfig_child (g); c; c = zconfig_next (c)) {
            const char *name = zconfig_name (c);
            if (!strcmp (name, "peers") && !zconfig_child (c)) {
                char key [S_PATH_MAX + 8];
                snprintf (key, sizeof key, "%s/peers", gpath);
                gc_err_t perr = { 0 };
                if (gc_scenario_peers (self, s_leaf (c), &group->peers, key, &perr))
                    return gc_err_set (ctx->err, 1, "%s: %s", ctx->file, perr.msg);
                has_peers = true;
            }
            else
            if (strcmp (name, "sim")        /* gcsim's own keys */
            &&  s_walk_settings (ctx, c, name, prefix, &group->settings, &group->n_settings))
                return -1;
        }
        if (!has_peers)
            return s_error (ctx, gpath, "missing peers = \"...\" (which peers the group is)");
        for (size_t i = 0; i < group->n_settings; i++)
            if (s_common_key (group->settings [i].path))
                return s_error (ctx, gpath, "%s must be the same for every peer of a network: "
                                "set it outside any group", group->settings [i].path);
        //  An attack implies the Byzantine role.
        bool kind = false, attack = false;
        for (size_t i = 0; i < group->n_settings; i++) {
            kind |= !strcmp (group->settings [i].path, "role/kind");
            attack |= !strcmp (group->settings [i].path, "role/attack") && *group->settings [i].value;
        }
        if (attack && !kind
        &&  s_add_setting (ctx, &group->settings, &group->n_settings, prefix, "role/kind", "byzantine"))
            return -1;
    }
    return 0;
}

static int
s_parse_at (s_ctx_t *ctx, gc_event_t *ev, const char *key, const char *text)
{
    char word [16];
    int used = 0;
    if (sscanf (text, " %15s %n", word, &used) != 1)
        return s_error (ctx, key, "missing (expected \"round N\", \"time SECONDS\" or \"after EVENT SECONDS\")");
    gc_err_t perr = { 0 };
    if (!strcmp (word, "round")) {
        ev->at_kind = GC_AT_ROUND;
        if (gc_parse_double (text + used, 0, 1e9, &ev->at, key, &perr))
            return gc_err_set (ctx->err, 1, "%s: %s", ctx->file, perr.msg);
        ev->at = floor (ev->at);
    }
    else
    if (!strcmp (word, "time")) {
        ev->at_kind = GC_AT_TIME;
        if (gc_parse_double (text + used, 0, 7 * 86400, &ev->at, key, &perr))
            return gc_err_set (ctx->err, 1, "%s: %s", ctx->file, perr.msg);
    }
    else
    if (!strcmp (word, "after")) {
        //  "after NAME SECONDS": NAME is an earlier event of the timeline
        char name [128];
        int more = 0;
        if (sscanf (text + used, "%127s %n", name, &more) != 1)
            return s_error (ctx, key, "'%s' (expected \"after EVENT SECONDS\")", text);
        gc_scenario_t *self = ctx->self;
        size_t e;
        for (e = 0; e + 1 < self->n_events; e++)
            if (!strcmp (self->events [e].name, name))
                break;
        if (e + 1 >= self->n_events)
            return s_error (ctx, key, "'%s' is not an earlier event of the timeline", name);
        ev->at_kind = GC_AT_AFTER;
        ev->after = e;
        if (gc_parse_double (text + used + more, 0, 7 * 86400, &ev->at, key, &perr))
            return gc_err_set (ctx->err, 1, "%s: %s", ctx->file, perr.msg);
    }
    else
        return s_error (ctx, key, "'%s' (expected \"round N\", \"time SECONDS\" or "
                        "\"after EVENT SECONDS\")", text);
    return 0;
}

//  "100mbit", "12.5kB", "250000" (bytes/s), "0" or "off" (no cap).
static int
s_parse_partition (s_ctx_t *ctx, gc_event_t *ev, const char *key, const char *args)
{
    gc_scenario_t *self = ctx->self;
    char *copy = strdup (args);
    if (!copy)
        return s_error (ctx, key, "out of memory");
    char *save = NULL;
    gc_peerset_t seen;
    gc_peerset_clear (&seen);
    int rc = 0;
    for (char *side = strtok_r (copy, "|", &save); side && rc == 0; side = strtok_r (NULL, "|", &save)) {
        if (ev->n_sides == GC_SCENARIO_MAX_SIDES) {
            rc = s_error (ctx, key, "more than %d sides", GC_SCENARIO_MAX_SIDES);
            break;
        }
        gc_err_t perr = { 0 };
        gc_peerset_t *set = &ev->sides [ev->n_sides++];
        if (gc_scenario_peers (self, side, set, key, &perr))
            rc = gc_err_set (ctx->err, 1, "%s: %s", ctx->file, perr.msg);
        else
        if (gc_peerset_intersects (set, &seen))
            rc = s_error (ctx, key, "a peer is on two sides of the partition");
        else
            gc_peerset_union (&seen, set);
    }
    free (copy);
    if (rc == 0 && ev->n_sides == 0)
        rc = s_error (ctx, key, "partition needs sides, e.g. \"partition 0-7 | 8-15\"");
    return rc;
}

static int
s_parse_do (s_ctx_t *ctx, gc_event_t *ev, const char *key, const char *text)
{
    char word [16];
    int used = 0;
    if (sscanf (text, " %15s %n", word, &used) != 1)
        return s_error (ctx, key, "missing (e.g. \"kill\", \"drop 0.2\", \"partition 0-7 | 8-15\")");
    const char *args = text + used;
    size_t a;
    for (a = 0; a < S_NACTIONS; a++)
        if (!strcmp (word, s_actions [a].name))
            break;
    if (a == S_NACTIONS)
        return s_error (ctx, key, "unknown action '%s' (kill, term, stop, cont, restart, drop, delay, "
                        "partition, heal, slow, rate)", word);
    ev->action = s_actions [a].action;
    gc_err_t perr = { 0 };
    int rc = 0;
    double v2 = 0;
    switch (ev->action) {
        case GC_ACT_KILL: case GC_ACT_TERM: case GC_ACT_STOP: case GC_ACT_CONT: case GC_ACT_HEAL:
            if (*args)
                return s_error (ctx, key, "%s takes no argument", word);
            break;
        case GC_ACT_RESTART:
            if (!strcmp (args, "resume"))
                ev->resume = true;
            else
            if (*args)
                return s_error (ctx, key, "expected \"restart\" or \"restart resume\"");
            break;
        case GC_ACT_DROP:
            rc = gc_parse_double (args, 0, 1, &ev->value, key, &perr);
            break;
        case GC_ACT_DELAY: {
            char ms [64] = "", jitter [64] = "";
            int n = sscanf (args, "%63s %63s", ms, jitter);
            rc = gc_parse_double (ms, 0, 600000, &ev->value, key, &perr);
            if (rc == 0 && n == 2)
                rc = gc_parse_double (jitter, 0, 600000, &v2, key, &perr);
            ev->value2 = v2;
            break;
        }
        case GC_ACT_SLOW:
            rc = gc_parse_double (args, 1, 1000, &ev->value, key, &perr);
            break;
        case GC_ACT_RATE:
            rc = gc_parse_rate (args, &ev->value, key, &perr);
            break;
        case GC_ACT_PARTITION:
            return s_parse_partition (ctx, ev, key, args);
    }
    if (rc)
        return gc_err_set (ctx->err, 1, "%s: %s", ctx->file, perr.msg);
    return 0;
}

static int
s_parse_timeline (s_ctx_t *ctx, zconfig_t *section)
{
    gc_scenario_t *self = ctx->self;
    for (zconfig_t *e = zconfig_child (section); e; e = zconfig_next (e)) {
        char epath [S_PATH_MAX];
        snprintf (epath, sizeof epath, "timeline/%s", zconfig_name (e));
        if (s_only_leaves (ctx, e, epath))
            return -1;
        gc_event_t *grown = realloc (self->events, (self->n_events + 1) * sizeof *grown);
        if (!grown)
            return s_error (ctx, epath, "out of memory");
        self->events = grown;
        gc_event_t *ev = &self->events [self->n_events++];
        memset (ev, 0, sizeof *ev);
        ev->name = strdup (zconfig_name (e));
        const char *at = NULL, *act = NULL, *peers = NULL;
        for (zconfig_t *c = zconfig_child (e); c; c = zconfig_next (c)) {
            const char *name = zconfig_name (c);
            if (!strcmp (name, "at")) at = s_leaf (c);
            else if (!strcmp (name, "do")) act = s_leaf (c);
            else if (!strcmp (name, "peers")) peers = s_leaf (c);
            else
                return s_error (ctx, epath, "unknown key '%s' (expected at, do, peers)", name);
        }
        char key [S_PATH_MAX + 8];
        if (!at)
            return s_error (ctx, epath, "missing at = \"round N\", \"time SECONDS\" or \"after EVENT SECONDS\"");
        if (!act)
            return s_error (ctx, epath, "missing do = \"ACTION [ARGS]\"");
        snprintf (key, sizeof key, "%s/at", epath);
        if (s_parse_at (ctx, ev, key, at))
            return -1;
        snprintf (key, sizeof key, "%s/do", epath);
        if (s_check_value (ctx, key, act) || s_parse_do (ctx, ev, key, act))
            return -1;
        ev->text = strdup (act);
        snprintf (key, sizeof key, "%s/peers", epath);
        if (peers && ev->action == GC_ACT_PARTITION)
            return s_error (ctx, key, "a partition acts on everyone: list its sides in do");
        gc_err_t perr = { 0 };
        if (peers && gc_scenario_peers (self, peers, &ev->peers, key, &perr))
            return gc_err_set (ctx->err, 1, "%s: %s", ctx->file, perr.msg);
        if (!peers)
            gc_peerset_all (&ev->peers, self->n_peers);
        if (!ev->name || !ev->text)
            return s_error (ctx, epath, "out of memory");
        self->uses_control |= ev->action >= GC_ACT_DROP;
        self->uses_resume |= ev->resume;
    }
    return 0;
}

static bool
s_metric_known (const char *name)
{
    for (size_t i = 0; i < sizeof s_metrics / sizeof s_metrics [0]; i++)
        if (!strcmp (name, s_metrics [i]))
            return true;
    if (strncmp (name, "rejected.", 9))
        return false;
    for (int r = 1; r < GC_REJECT_LAST; r = r + 1 == GC_WIRE_NREASONS ? GC_REJECT_NOT_NEIGHBOUR : r + 1)
        if (!strcmp (name + 9, gc_engine_reason_name (r)))
            return true;
    return false;
}

static int
s_parse_asserts (s_ctx_t *ctx, zconfig_t *section)
{
    gc_scenario_t *self = ctx->self;
    if (s_only_leaves (ctx, section, "assert"))
        return -1;
    for (zconfig_t *c = zconfig_child (section); c; c = zconfig_next (c)) {
        const char *name = zconfig_name (c), *text = s_leaf (c);
        char key [S_PATH_MAX];
        snprintf (key, sizeof key, "assert/%s", name);
        if (!s_metric_known (name))
            return s_error (ctx, key, "unknown metric (honest_mean_accuracy, honest_min_accuracy, "
                            "consensus_distance, honest_crashes, min_rounds, accepted_from_untrusted, "
                            "events_not_fired, rejected_total, rejected.REASON, rounds_to_target, "
                            "time_to_target_s, mb_to_target, rounds_redone)");
        while (*text == ' ')
            text++;
        size_t c_i, n_cmp = sizeof s_cmp_names / sizeof s_cmp_names [0];
        //  Two-character operators first, so ">=" is not read as ">".
        for (c_i = 0; c_i < n_cmp; c_i++) {
            size_t len = strlen (s_cmp_names [c_i]);
            if (len == 2 && !strncmp (text, s_cmp_names [c_i], len))
                break;
        }
        if (c_i == n_cmp)
            for (c_i = 0; c_i < n_cmp; c_i++)
                if (strlen (s_cmp_names [c_i]) == 1 && *text == *s_cmp_names [c_i])
                    break;
        if (c_i == n_cmp)
            return s_error (ctx, key, "'%s' (expected an operator and a number, e.g. \">= 0.8\")", text);
        gc_check_t *grown = realloc (self->checks, (self->n_checks + 1) * sizeof *grown);
        if (!grown)
            return s_error (ctx, key, "out of memory");
        self->checks = grown;
        gc_check_t *check = &self->checks [self->n_checks++];
        memset (check, 0, sizeof *check);
        check->cmp = (gc_cmp_t) c_i;
        gc_err_t perr = { 0 };
        const char *num = text + strlen (s_cmp_names [c_i]);
        while (*num == ' ')
            num++;
        if (gc_parse_double (num, -1e18, 1e18, &check->value, key, &perr))
            return gc_err_set (ctx->err, 1, "%s: %s", ctx->file, perr.msg);
        check->metric = strdup (name);
        char buf [S_PATH_MAX + 64];
        snprintf (buf, sizeof buf, "%s %s %g", name, s_cmp_names [c_i], check->value);
        check->text = strdup (buf);
        if (!check->metric || !check->text)
            return s_error (ctx, key, "out of memory");
    }
    return 0;
}

static int
s_compute_roles (s_ctx_t *ctx)
{
    gc_scenario_t *self = ctx->self;
    gc_peerset_clear (&self->byzantine);
    for (uint32_t i = 0; i < self->n_peers; i++) {
        const char *kind = gc_scenario_value (self, i, "role/kind");
        if (!kind || strcmp (kind, "byzantine"))
            continue;
        gc_peerset_add (&self->byzantine, i);
        const char *attack = gc_scenario_value (self, i, "role/attack");
        if (!attack || !*attack)
            return s_error (ctx, "role/attack", "missing for peer %u (role/kind is byzantine)", i);
    }
    return 0;
}

static int
s_parse (s_ctx_t *ctx, zconfig_t *root)
{
    gc_scenario_t *self = ctx->self;
    self->timeout_s = 600;
    self->target_accuracy = 0.85;
    self->grace_s = 10;
    //  scenario first (the peer count), then groups (roles), then the rest:
    //  peer sets can name groups, "honest" and "byzantine".
    zconfig_t *scenario = zconfig_locate (root, "scenario");
    if (!scenario)
        return gc_err_set (ctx->err, 1, "%s: scenario: missing section (scenario/peers is required)", ctx->file);
    if (s_parse_scenario_section (ctx, scenario))
        return -1;
    if (ctx->n_peers)
        self->n_peers = ctx->n_peers;
    if (self->n_peers == 0)
        return s_error (ctx, "scenario/peers", "missing (the number of peers)");
    for (zconfig_t *c = zconfig_child (root); c; c = zconfig_next (c)) {
        const char *name = zconfig_name (c);
        if (!strcmp (name, "scenario") || !strcmp (name, "group") || !strcmp (name, "timeline")
        ||  !strcmp (name, "assert") || !strcmp (name, "sim"))
            continue;
        if (!zconfig_child (c))
            return s_error (ctx, name, "unknown section (scenario, group, timeline, assert, or a "
                            "gcnode section: node, topology, train, gossip, role)");
        if (s_walk_settings (ctx, c, name, "", &self->settings, &self->n_settings))
            return -1;
    }
    for (size_t i = 0; i < self->n_settings; i++)
        if (!strcmp (self->settings [i].path, "role/attack") && *self->settings [i].value)
            return s_error (ctx, "role/attack", "would make every peer Byzantine: put the attack in a "
                            "group (group/NAME/peers, group/NAME/role/attack)");
    zconfig_t *groups = zconfig_locate (root, "group");
    if (groups && s_parse_groups (ctx, groups))
        return -1;
    if (s_compute_roles (ctx))
        return -1;
    if (gc_peerset_count (&self->byzantine) == self->n_peers)
        return s_error (ctx, "role/kind", "every peer is Byzantine: there is nobody to measure");
    zconfig_t *timeline = zconfig_locate (root, "timeline");
    if (timeline && s_parse_timeline (ctx, timeline))
        return -1;
    zconfig_t *asserts = zconfig_locate (root, "assert");
    if (asserts && s_parse_asserts (ctx, asserts))
        return -1;
    return 0;
}

static gc_scenario_t *
s_load (zconfig_t *root, const char *name, uint32_t max_peers, uint32_t n_peers, gc_err_t *err)
{
    gc_scenario_t *self = calloc (1, sizeof *self);
    if (!self) {
        zconfig_destroy (&root);
        gc_err_set (err, GC_E_NOMEM, "%s: out of memory", name);
        return NULL;
    }
    self->path = strdup (name);
    //  Default name: the file's stem.
    const char *base = strrchr (name, '/');
    base = base ? base + 1 : name;
    self->name = strndup (base, strcspn (base, "."));
    s_ctx_t ctx = { .self = self, .file = name, .err = err, .max_peers = max_peers, .n_peers = n_peers };
    int rc = self->path && self->name ? s_parse (&ctx, root) : gc_err_set (err, GC_E_NOMEM, "out of memory");
    zconfig_destroy (&root);
    if (rc)
        gc_scenario_destroy (&self);
    return self;
}

static gc_scenario_t *
s_load_file (const char *path, uint32_t max_peers, uint32_t n_peers, gc_err_t *err)
{
    FILE *f = fopen (path, "r");
    if (!f) {
        gc_err_set (err, GC_E_IO, "%s: cannot open (%s)", path, strerror (errno));
        return NULL;
    }
    fclose (f);
    zconfig_t *root = zconfig_load (path);
    if (!root) {
        gc_err_set (err, GC_E_PARSE, "%s: not valid ZPL (4-space indentation, name = value)", path);
        return NULL;
    }
    return s_load (root, path, max_peers, n_peers, err);
}

gc_scenario_t *
gc_scenario_load (const char *path, gc_err_t *err)
{
    return s_load_file (path, GC_SCENARIO_MAX_PEERS, 0, err);
}

gc_scenario_t *
gc_scenario_load_sim (const char *path, uint32_t n_peers, gc_err_t *err)
{
    if (n_peers > GC_PEERSET_MAX) {
        gc_err_set (err, GC_E_CONFIG, "%s: --peers %u: at most %d peers", path, n_peers, GC_PEERSET_MAX);
        return NULL;
    }
    return s_load_file (path, GC_PEERSET_MAX, n_peers, err);
}

gc_scenario_t *
gc_scenario_load_str (const char *text, const char *name, gc_err_t *err)
{
    zconfig_t *root = zconfig_str_load (text);
    if (!root) {
        gc_err_set (err, GC_E_PARSE, "%s: not valid ZPL (4-space indentation, name = value)", name);
        return NULL;
    }
    return s_load (root, name, GC_SCENARIO_MAX_PEERS, 0, err);
}

static void
s_free_settings (gc_setting_t *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free (list [i].path);
        free (list [i].value);
    }
    free (list);
}

void
gc_scenario_destroy (gc_scenario_t **self_p)
{
    gc_scenario_t *self = *self_p;
    if (!self)
        return;
    free (self->path);
    free (self->name);
    free (self->description);
    s_free_settings (self->settings, self->n_settings);
    for (size_t i = 0; i < self->n_groups; i++) {
        free (self->groups [i].name);
        s_free_settings (self->groups [i].settings, self->groups [i].n_settings);
    }
    free (self->groups);
    for (size_t i = 0; i < self->n_events; i++) {
        free (self->events [i].name);
        free (self->events [i].text);
    }
    free (self->events);
    for (size_t i = 0; i < self->n_checks; i++) {
        free (self->checks [i].metric);
        free (self->checks [i].text);
    }
    free (self->checks);
    free (self);
    *self_p = NULL;
}

const char *
gc_scenario_value (const gc_scenario_t *self, uint32_t peer, const char *path)
{
    const char *value = NULL;
    for (size_t i = 0; i < self->n_settings; i++)
        if (!strcmp (self->settings [i].path, path))
            value = self->settings [i].value;
    for (size_t g = 0; g < self->n_groups; g++) {
        if (!gc_peerset_has (&self->groups [g].peers, peer))
            continue;
        for (size_t i = 0; i < self->groups [g].n_settings; i++)
            if (!strcmp (self->groups [g].settings [i].path, path))
                value = self->groups [g].settings [i].value;
    }
    return value;
}

bool
gc_scenario_is_byzantine (const gc_scenario_t *self, uint32_t peer)
{
    return gc_peerset_has (&self->byzantine, peer);
}

const char *
gc_scenario_attack (const gc_scenario_t *self, uint32_t peer)
{
    const char *attack = gc_scenario_value (self, peer, "role/attack");
    return attack && gc_scenario_is_byzantine (self, peer) ? attack : "";
}

static void
s_apply (const gc_setting_t *list, size_t n, zconfig_t *root)
{
    for (size_t i = 0; i < n; i++)
        zconfig_put (root, list [i].path, list [i].value);
}

int
gc_scenario_write_config (const gc_scenario_t *self, uint32_t peer, const gc_peer_env_t *env,
                          FILE *out, gc_err_t *err)
{
    if (peer >= self->n_peers)
        return gc_err_set (err, GC_E_ARG, "peer %u: the scenario has %u peers", peer, self->n_peers);
    if (!env || !env->endpoints || !env->public_keys || !env->private_key)
        return gc_err_set (err, GC_E_ARG, "peer %u: endpoints, public keys and the private key are needed", peer);
    zconfig_t *root = zconfig_new ("root", NULL);
    if (!root)
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    char buf [32];
    snprintf (buf, sizeof buf, "%u", peer);
    zconfig_put (root, "node/index", buf);
    zconfig_put (root, "node/key", env->private_key);
    zconfig_put (root, "node/progress", "off");
    if (env->curve)
        zconfig_put (root, "node/curve", env->curve);
    s_apply (self->settings, self->n_settings, root);
    for (size_t g = 0; g < self->n_groups; g++)
        if (gc_peerset_has (&self->groups [g].peers, peer))
            s_apply (self->groups [g].settings, self->groups [g].n_settings, root);
    const struct { const char *path, *value; } env_keys [] = {
        { "node/bind", env->bind }, { "node/metrics", env->metrics }, { "node/control", env->control },
        { "node/final_model", env->final_model }, { "node/checkpoint_dir", env->checkpoint_dir }
    };
    for (size_t i = 0; i < sizeof env_keys / sizeof env_keys [0]; i++)
        if (env_keys [i].value)
            zconfig_put (root, env_keys [i].path, env_keys [i].value);
    for (uint32_t i = 0; i < self->n_peers; i++) {
        char path [64];
        snprintf (path, sizeof path, "peers/%u/endpoint", i);
        zconfig_put (root, path, env->endpoints [i]);
        snprintf (path, sizeof path, "peers/%u/key", i);
        zconfig_put (root, path, env->public_keys [i]);
    }
    fprintf (out, "#   Generated by gcnet from %s: peer %u (%s%s%s)\n", self->path, peer,
             gc_scenario_is_byzantine (self, peer) ? "byzantine" : "honest",
             *gc_scenario_attack (self, peer) ? ", attack " : "", gc_scenario_attack (self, peer));
    zconfig_fprint (root, out);
    zconfig_destroy (&root);
    return ferror (out) ? gc_err_set (err, GC_E_IO, "peer %u: cannot write the configuration", peer) : 0;
}

//  How many Byzantine inputs out of k the rule tolerates, or -1 if unknown.
static int
s_tolerance (const char *spec, size_t k, gc_err_t *err)
{
    gc_robust_t *rule = gc_robust_new (spec, err);
    if (!rule)
        return -2;
    int f = gc_robust_f (rule);
    const char *name = gc_robust_name (rule);
    const char *last = strrchr (name, '+');
    last = last ? last + 1 : name;
    if (k < gc_robust_min_inputs (rule))
        f = 0;                      /* too few inputs: the rule cannot do its job */
    else
    if (f < 0 && (!strncmp (last, "cwmed", 5) || !strncmp (last, "gm", 2)))
        f = (int) ((k - 1) / 2);    /* 2f < k */
    else
    if (f < 0 && !strcmp (last, "mean"))
        f = 0;
    gc_robust_destroy (&rule);
    return f;
}

int
gc_scenario_lint (const gc_scenario_t *self, FILE *out, gc_err_t *err)
{
    const char *topo = gc_scenario_value (self, 0, "topology/kind");
    const char *seed_text = gc_scenario_value (self, 0, "node/seed");
    gc_config_t *defaults = gc_config_new ();
    if (!defaults)
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    unsigned long long seed = defaults->seed;
    if (seed_text && gc_parse_u64 (seed_text, &seed, "node/seed", err)) {
        gc_config_destroy (&defaults);
        return -1;
    }
    gc_topology_t *topology = gc_topology_new (topo ? topo : defaults->topology, self->n_peers, seed, err);
    if (!topology) {
        gc_config_destroy (&defaults);
        return gc_err_prefix (err, "%s: topology/kind: ", self->path);
    }
    int violations = 0;
    for (uint32_t i = 0; i < self->n_peers && violations >= 0; i++) {
        if (gc_scenario_is_byzantine (self, i))
            continue;
        const uint32_t *in;
        size_t k = gc_topology_in (topology, i, &in);
        size_t byz = 0;
        for (size_t j = 0; j < k; j++)
            byz += gc_scenario_is_byzantine (self, in [j]);
        if (byz == 0)
            continue;
        const char *agg = gc_scenario_value (self, i, "gossip/aggregator");
        agg = agg ? agg : defaults->aggregator;
        int f = s_tolerance (agg, k + 1, err);
        if (f == -2) {
            gc_err_prefix (err, "%s: gossip/aggregator (peer %u): ", self->path, i);
            violations = -1;
        }
        else
        if (f >= 0 && byz > (size_t) f) {
            if (out)
                fprintf (out, "peer %u has %zu Byzantine of %zu in-neighbours; %s with %zu inputs "
                         "tolerates %d\n", i, byz, k, agg, k + 1, f);
            violations++;
        }
    }
    gc_topology_destroy (&topology);
    gc_config_destroy (&defaults);
    return violations;
}
