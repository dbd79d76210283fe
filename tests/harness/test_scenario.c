/*  The scenario parser: every error names the key, the parsed struct holds
    what the file says, generated configs load in gcnode's own parser, the
    Byzantine-tolerance lint, and every scenario of the library parses. */
#include "gc_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_config.h"
#include "gc_scenario.h"

//  A valid head every bad case builds on.
#define S_HEAD "scenario\n    peers = 4\n"

static const struct {
    const char *text;
    const char *expect;             /* substring of the error */
} s_bad [] = {
    { "train\n    rounds = 10\n", "t.zpl: scenario: missing section" },
    { "scenario\n    name = \"x\"\n", "scenario/peers: missing" },
    { "scenario\n    peers = 0\n", "scenario/peers: 0 is outside" },
    { "scenario\n    peers = 300\n", "scenario/peers: 300 is outside" },
    { "scenario\n    peers = four\n", "scenario/peers: 'four' is not an integer" },
    { S_HEAD "    color = \"red\"\n", "scenario/color: unknown key" },
    { S_HEAD "    base_port = 80\n", "scenario/base_port: 80 is a privileged port" },
    { S_HEAD "    timeout_s = 0\n", "scenario/timeout_s" },
    { S_HEAD "    peers\n        x = 1\n", "scenario: 'peers' has sub-keys" },
    { S_HEAD "gossip\n    agregator = \"cwmed\"\n", "unknown key 'gossip/agregator'" },
    { S_HEAD "train\n    rounds = lots\n", "train/rounds: 'lots' is not an integer" },
    { S_HEAD "train\n    momentum = 2\n", "train/momentum: 2 is outside" },
    { S_HEAD "node\n    index = 1\n", "node/index: set by gcnet" },
    { S_HEAD "node\n    control = \"ipc://x\"\n", "node/control: set by gcnet" },
    { S_HEAD "peers\n    0\n        endpoint = \"tcp://x:1\"\n", "peers/0/endpoint: set by gcnet" },
    { S_HEAD "colour = \"red\"\n", "colour: unknown section" },
    { S_HEAD "role\n    attack = \"alie\"\n", "role/attack: would make every peer Byzantine" },
    { S_HEAD "group\n    bad\n        role\n            attack = \"alie\"\n", "group/bad: missing peers" },
    { S_HEAD "group\n    bad\n        peers = \"1-9\"\n        role\n            attack = \"alie\"\n",
      "group/bad/peers: peer: 9 is outside [1, 3]" },
    { S_HEAD "group\n    bad\n        peers = \"1,x\"\n        role\n            attack = \"alie\"\n",
      "group/bad/peers: 'x' is not a peer index" },
    { S_HEAD "group\n    bad\n        peers = \"1\"\n        topology\n            kind = \"ring\"\n",
      "group/bad: topology/kind must be the same for every peer" },
    { S_HEAD "group\n    bad\n        peers = \"1\"\n        gossip\n            wait = 5\n            x = 1\n",
      "group/bad/unknown key 'gossip/x'" },
    { S_HEAD "group\n    honest\n        peers = \"1\"\n        role\n            attack = \"alie\"\n",
      "group/honest: a group name cannot be" },
    { S_HEAD "group\n    b\n        peers = \"1\"\n        role\n            kind = \"byzantine\"\n",
      "role/attack: missing for peer 1" },
    { S_HEAD "group\n    b\n        peers = \"all\"\n        role\n            attack = \"alie\"\n",
      "every peer is Byzantine" },
    { S_HEAD "timeline\n    x\n        do = \"kill\"\n", "timeline/x: missing at" },
    { S_HEAD "timeline\n    x\n        at = \"round 5\"\n", "timeline/x: missing do" },
    { S_HEAD "timeline\n    x\n        at = \"soon\"\n        do = \"kill\"\n", "timeline/x/at: 'soon'" },
    { S_HEAD "timeline\n    x\n        at = \"round -1\"\n        do = \"kill\"\n", "timeline/x/at: -1 is outside" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"explode\"\n",
      "timeline/x/do: unknown action 'explode'" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"kill 3\"\n", "timeline/x/do: kill takes no argument" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"drop 1.5\"\n", "timeline/x/do: 1.5 is outside [0, 1]" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"drop\"\n", "timeline/x/do: missing value" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"slow 0.5\"\n", "timeline/x/do: 0.5 is outside" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"delay 10 x\"\n", "timeline/x/do: 'x' is not a number" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"rate 5parsecs\"\n", "timeline/x/do: unknown unit" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"rate 10\"\n", "timeline/x/do: '10' is below 1000" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"restart now\"\n", "timeline/x/do: expected \"restart\"" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"partition 0-1 | 1-3\"\n",
      "timeline/x/do: a peer is on two sides" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"partition\"\n", "timeline/x/do: partition needs sides" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"partition 0 | 1\"\n        peers = \"0\"\n",
      "timeline/x/peers: a partition acts on everyone" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"kill\"\n        peers = \"nobody\"\n",
      "timeline/x/peers: 'nobody' is not" },
    { S_HEAD "timeline\n    x\n        at = \"time 1\"\n        do = \"kill\"\n        when = \"now\"\n",
      "timeline/x: unknown key 'when'" },
    { S_HEAD "timeline\n    x\n        at = \"after y 1\"\n        do = \"kill\"\n",
      "timeline/x/at: 'y' is not an earlier event" },
    { S_HEAD "timeline\n    x\n        at = \"after x 1\"\n        do = \"kill\"\n",
      "timeline/x/at: 'x' is not an earlier event" },
    { S_HEAD "assert\n    speed = \">= 1\"\n", "assert/speed: unknown metric" },
    { S_HEAD "assert\n    rejected.bogus = \"== 0\"\n", "assert/rejected.bogus: unknown metric" },
    { S_HEAD "assert\n    min_rounds = \"about 5\"\n", "assert/min_rounds: 'about 5' (expected an operator" },
    { S_HEAD "assert\n    min_rounds = \">= many\"\n", "assert/min_rounds: 'many' is not a number" },
};

static void
test_errors_name_the_key (void **state)
{
    (void) state;
    for (size_t i = 0; i < sizeof s_bad / sizeof s_bad [0]; i++) {
        gc_err_t err = { 0 };
        gc_scenario_t *sc = gc_scenario_load_str (s_bad [i].text, "t.zpl", &err);
        if (sc || !strstr (err.msg, s_bad [i].expect) || strncmp (err.msg, "t.zpl: ", 7))
            fail_msg ("case %zu: expected an error with '%s', got %s '%s'", i, s_bad [i].expect,
                      sc ? "success" : "error", err.msg);
        gc_scenario_destroy (&sc);
    }
}

static const char *s_good =
    "#   a full scenario\n"
    "scenario\n"
    "    name = \"full\"\n"
    "    description = \"all of it\"\n"
    "    peers = 16\n"
    "    timeout_s = 90\n"
    "    grace_s = 3\n"
    "    base_port = 21000\n"
    "topology\n"
    "    kind = \"torus:4x4\"\n"
    "train\n"
    "    data = \"synthetic\"\n"
    "    rounds = 100\n"
    "gossip\n"
    "    aggregator = \"cwtm:1\"\n"
    "group\n"
    "    liars\n"
    "        peers = \"0,1,10-11\"\n"
    "        role\n"
    "            attack = \"alie\"\n"
    "    slowpoke\n"
    "        peers = \"5\"\n"
    "        gossip\n"
    "            aggregator = \"cwmed\"\n"
    "timeline\n"
    "    crash\n"
    "        at = \"round 50\"\n"
    "        do = \"kill\"\n"
    "        peers = \"slowpoke,2\"\n"
    "    back\n"
    "        at = \"after crash 2.5\"\n"
    "        do = \"restart resume\"\n"
    "        peers = \"5\"\n"
    "    split\n"
    "        at = \"time 12.5\"\n"
    "        do = \"partition 0-7 | 8-11\"\n"
    "    loss\n"
    "        at = \"time 0\"\n"
    "        do = \"drop 0.2\"\n"
    "        peers = \"honest\"\n"
    "    cap\n"
    "        at = \"time 1\"\n"
    "        do = \"rate 100mbit\"\n"
    "    lag\n"
    "        at = \"time 1\"\n"
    "        do = \"delay 50 10\"\n"
    "assert\n"
    "    honest_mean_accuracy = \">= 0.8\"\n"
    "    consensus_distance = \"<0.05\"\n"
    "    rejected.bad_signature = \"== 0\"\n";

static void
test_full_scenario (void **state)
{
    (void) state;
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load_str (s_good, "full.zpl", &err);
    if (!sc)
        fail_msg ("%s", err.msg);
    assert_string_equal (sc->name, "full");
    assert_string_equal (sc->description, "all of it");
    assert_int_equal (sc->n_peers, 16);
    assert_true (sc->timeout_s == 90 && sc->grace_s == 3 && sc->base_port == 21000);
    //  roles: the attack made the group Byzantine
    assert_int_equal (gc_peerset_count (&sc->byzantine), 4);
    assert_true (gc_scenario_is_byzantine (sc, 10) && !gc_scenario_is_byzantine (sc, 9));
    assert_string_equal (gc_scenario_attack (sc, 11), "alie");
    assert_string_equal (gc_scenario_attack (sc, 5), "");
    //  settings: common, overridden per group, untouched
    assert_string_equal (gc_scenario_value (sc, 4, "gossip/aggregator"), "cwtm:1");
    assert_string_equal (gc_scenario_value (sc, 5, "gossip/aggregator"), "cwmed");
    assert_string_equal (gc_scenario_value (sc, 5, "topology/kind"), "torus:4x4");
    assert_null (gc_scenario_value (sc, 0, "gossip/wait"));
    //  timeline
    assert_int_equal (sc->n_events, 6);
    const gc_event_t *e = sc->events;
    assert_true (e [0].at_kind == GC_AT_ROUND && e [0].at == 50 && e [0].action == GC_ACT_KILL);
    char buf [64];
    gc_peerset_format (&e [0].peers, buf, sizeof buf);
    assert_string_equal (buf, "2,5");
    assert_true (e [1].at_kind == GC_AT_AFTER && e [1].after == 0 && e [1].at == 2.5);
    assert_true (e [1].action == GC_ACT_RESTART && e [1].resume);
    assert_true (e [2].action == GC_ACT_PARTITION && e [2].n_sides == 2 && e [2].at_kind == GC_AT_TIME);
    gc_peerset_format (&e [2].sides [1], buf, sizeof buf);
    assert_string_equal (buf, "8-11");
    assert_true (e [3].action == GC_ACT_DROP && e [3].value == 0.2);
    assert_int_equal (gc_peerset_count (&e [3].peers), 12);     /* honest */
    assert_true (e [4].action == GC_ACT_RATE && e [4].value == 100e6 / 8);
    assert_true (e [5].action == GC_ACT_DELAY && e [5].value == 50 && e [5].value2 == 10);
    assert_true (sc->uses_control && sc->uses_resume);
    //  assertions
    assert_int_equal (sc->n_checks, 3);
    assert_true (sc->checks [0].cmp == GC_CMP_GE && sc->checks [0].value == 0.8);
    assert_true (sc->checks [1].cmp == GC_CMP_LT && sc->checks [1].value == 0.05);
    assert_string_equal (sc->checks [2].metric, "rejected.bad_signature");
    gc_scenario_destroy (&sc);
    assert_null (sc);
}

//  The name defaults to the file's stem; no timeline, no assertions is fine.
static void
test_minimal_scenario (void **state)
{
    (void) state;
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load_str ("scenario\n    peers = 1\n", "dir/tiny.zpl", &err);
    if (!sc)
        fail_msg ("%s", err.msg);
    assert_string_equal (sc->name, "tiny");
    assert_int_equal (sc->n_events + sc->n_checks + sc->n_groups, 0);
    assert_false (sc->uses_control);
    gc_scenario_destroy (&sc);
}

static void
test_peer_sets (void **state)
{
    (void) state;
    static const struct {
        const char *text;
        const char *expect;         /* formatted set, or NULL for an error */
    } cases [] = {
        { "0,1,10-11", "0-1,10-11" }, { " 3 , 2 ", "2-3" }, { "all", "0-15" }, { "honest", "2-9,12-15" },
        { "byzantine", "0-1,10-11" }, { "liars,5", "0-1,5,10-11" }, { "15", "15" }, { "4-4", "4" },
        { "16", NULL }, { "3-2", NULL }, { "", NULL }, { "1,,2", NULL }, { "-1", NULL }, { "liar", NULL },
        { "1x", NULL },
    };
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load_str (s_good, "full.zpl", &err);
    assert_non_null (sc);
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_peerset_t set;
        int rc = gc_scenario_peers (sc, cases [i].text, &set, "key/x", &err);
        char buf [128];
        gc_peerset_format (&set, buf, sizeof buf);
        if (cases [i].expect && (rc || strcmp (buf, cases [i].expect)))
            fail_msg ("'%s': expected %s, got %s (%s)", cases [i].text, cases [i].expect, buf, rc ? err.msg : "");
        if (!cases [i].expect && (rc == 0 || !strstr (err.msg, "key/x")))
            fail_msg ("'%s': expected an error naming key/x, got '%s'", cases [i].text, rc ? err.msg : buf);
    }
    gc_scenario_destroy (&sc);
}

//  What gcnet writes for a peer is a configuration gcnode accepts, with the
//  scenario's values and the runner's.
static void
test_generated_config (void **state)
{
    (void) state;
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load_str (s_good, "full.zpl", &err);
    assert_non_null (sc);
    char *dir = gc_test_tmpdir ("scenario");
    const char *eps [16], *keys [16];
    char epbuf [16][64], keybuf [16][64];
    for (int i = 0; i < 16; i++) {
        snprintf (epbuf [i], sizeof epbuf [i], "tcp://127.0.0.1:%d", 21000 + i);
        snprintf (keybuf [i], sizeof keybuf [i], "keys/peer%d.pub", i);
        eps [i] = epbuf [i];
        keys [i] = keybuf [i];
    }
    gc_peer_env_t env = { .endpoints = eps, .public_keys = keys, .private_key = "keys/peer10.key",
                          .metrics = "m.jsonl", .control = "ipc:///tmp/x.ctl", .final_model = "p.model" };
    char path [512];
    snprintf (path, sizeof path, "%s/peer10.zpl", dir);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    assert_int_equal (gc_scenario_write_config (sc, 10, &env, f, &err), 0);
    fclose (f);
    gc_config_t *cfg = gc_config_new ();
    if (gc_config_load (cfg, path, &err) || gc_config_check (cfg, &err))
        fail_msg ("generated config does not load: %s", err.msg);
    assert_int_equal (cfg->index, 10);
    assert_int_equal (cfg->n_peers, 16);
    assert_string_equal (cfg->peers [15].endpoint, "tcp://127.0.0.1:21015");
    assert_string_equal (cfg->role, "byzantine");
    assert_string_equal (cfg->attack, "alie");
    assert_string_equal (cfg->topology, "torus:4x4");
    assert_string_equal (cfg->control, "ipc:///tmp/x.ctl");
    assert_string_equal (cfg->final_model, "p.model");
    assert_string_equal (cfg->progress, "off");
    assert_int_equal (cfg->rounds, 100);
    gc_config_destroy (&cfg);
    //  out of range and missing pieces are refused
    assert_int_equal (gc_scenario_write_config (sc, 16, &env, stdout, &err), -1);
    env.private_key = NULL;
    assert_int_equal (gc_scenario_write_config (sc, 0, &env, stdout, &err), -1);
    gc_test_rmtree (dir);
    free (dir);
    gc_scenario_destroy (&sc);
}

static void
test_lint (void **state)
{
    (void) state;
    static const struct {
        const char *topology, *byzantine, *aggregator;
        int violations;
    } cases [] = {
        { "torus:4x4", "0,1,10,11", "cwtm:1", 0 },      /* the library's attack layout */
        { "torus:4x4", "0,5", "cwtm:1", 2 },            /* peers 1 and 4 see both */
        { "torus:4x4", "0,5", "cwtm:2", 0 },
        { "torus:4x4", "0,5", "cwmed", 0 },             /* 2 of 5 inputs: 2f < k */
        { "torus:4x4", "0,1,4", "cwtm:1", 1 },          /* only peer 5 sees two (1 and 4) */
        { "torus:4x4", "0,1,4", "cwmed", 0 },           /* 2 of 5 inputs */
        { "ring", "3", "mean", 2 },                     /* mean tolerates nobody */
        { "ring", "3", "krum:1", 2 },                   /* 3 inputs < krum's minimum */
        { "complete", "0,1,2", "cwtm:3", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char text [1024];
        snprintf (text, sizeof text, "scenario\n    peers = 16\ntopology\n    kind = \"%s\"\ngossip\n"
                  "    aggregator = \"%s\"\ngroup\n    b\n        peers = \"%s\"\n        role\n"
                  "            attack = \"signflip\"\n", cases [i].topology, cases [i].aggregator,
                  cases [i].byzantine);
        gc_err_t err = { 0 };
        gc_scenario_t *sc = gc_scenario_load_str (text, "lint.zpl", &err);
        if (!sc)
            fail_msg ("case %zu: %s", i, err.msg);
        int v = gc_scenario_lint (sc, NULL, &err);
        if (v != cases [i].violations)
            fail_msg ("case %zu (%s, %s, %s): %d violations, expected %d", i, cases [i].topology,
                      cases [i].byzantine, cases [i].aggregator, v, cases [i].violations);
        gc_scenario_destroy (&sc);
    }
    //  a topology that does not parse is an error naming the key
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load_str ("scenario\n    peers = 4\ntopology\n    kind = \"blob\"\n", "t.zpl", &err);
    assert_non_null (sc);
    assert_int_equal (gc_scenario_lint (sc, NULL, &err), -1);
    assert_non_null (strstr (err.msg, "topology/kind"));
    gc_scenario_destroy (&sc);
}

static void
s_check_dir (const char *rel, int *count)
{
    char *dir = gc_test_source_path (rel);
    DIR *d = opendir (dir);
    if (!d)
        fail_msg ("cannot open %s", dir);
    struct dirent *e;
    while ((e = readdir (d))) {
        size_t len = strlen (e->d_name);
        if (len < 5 || strcmp (e->d_name + len - 4, ".zpl"))
            continue;
        char path [1024];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        gc_err_t err = { 0 };
        gc_scenario_t *sc = gc_scenario_load (path, &err);
        if (!sc)
            fail_msg ("%s", err.msg);
        int v = gc_scenario_lint (sc, stderr, &err);
        if (v != 0)
            fail_msg ("%s: %d lint findings (%s)", path, v, v < 0 ? err.msg : "above");
        if (sc->n_checks == 0)
            fail_msg ("%s: no assertions", path);
        (*count)++;
        gc_scenario_destroy (&sc);
    }
    closedir (d);
    free (dir);
}

//  Every scenario we ship parses, lints clean and asserts something.
static void
test_library (void **state)
{
    (void) state;
    int count = 0;
    s_check_dir ("configs/scenarios", &count);
    s_check_dir ("configs/scenarios/fast", &count);
    assert_true (count >= 20);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_errors_name_the_key),
        cmocka_unit_test (test_full_scenario),
        cmocka_unit_test (test_minimal_scenario),
        cmocka_unit_test (test_peer_sets),
        cmocka_unit_test (test_generated_config),
        cmocka_unit_test (test_lint),
        cmocka_unit_test (test_library),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
