/*  Beacons are hostile input: gc_discovery_parse accepts exactly
    "gcnode/1 <16 hex> tcp://HOST:PORT" (HOST "*" meaning the sender's
    address) and refuses everything else. The beacon actor itself is tested
    between real peers in tests/node/test_ops_discovery.c. */
#include "gc_test.h"

#include <string.h>

#include "gc_discovery.h"

static void
test_parse_table (void **state)
{
    static const struct {
        const char *beacon, *source, *endpoint;     /* endpoint NULL: refused */
    } cases [] = {
        { "gcnode/1 0f3823bc2476b05a tcp://10.0.0.2:7100", "10.0.0.9", "tcp://10.0.0.2:7100" },
        { "gcnode/1 0f3823bc2476b05a tcp://*:7100", "10.0.0.9", "tcp://10.0.0.9:7100" },
        { "gcnode/1 0f3823bc2476b05a tcp://*:7100", "fe80::1", "tcp://[fe80::1]:7100" },
        { "gcnode/1 0f3823bc2476b05a tcp://peer-3.lan:65535", "10.0.0.9", "tcp://peer-3.lan:65535" },
        { "gcnode/1 0f3823bc2476b05a tcp://[fd00::2]:7100", "10.0.0.9", "tcp://[fd00::2]:7100" },
        { "gcnode/1 0f3823bc2476b05a tcp://*:7100", "10.0.0.9; rm", NULL },     /* bad source */
        { "gcnode/1 0f3823bc2476b05a tcp://*:7100", NULL, NULL },
        { "gcnode/2 0f3823bc2476b05a tcp://10.0.0.2:7100", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05 tcp://10.0.0.2:7100", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05g tcp://10.0.0.2:7100", "10.0.0.9", NULL },
        { "gcnode/1 0F3823BC2476B05A tcp://10.0.0.2:7100", "10.0.0.9", "tcp://10.0.0.2:7100" },
        { "gcnode/1 0f3823bc2476b05a  tcp://10.0.0.2:7100", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a udp://10.0.0.2:7100", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a tcp://10.0.0.2:0", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a tcp://10.0.0.2:65536", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a tcp://10.0.0.2:71a", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a tcp://10.0.0.2", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a tcp://:7100", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a tcp://a b:7100", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a tcp://-x:7100", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a tcp://[fd00::g]:7100", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a tcp://10.0.0.2:7100 extra", "10.0.0.9", NULL },
        { "gcnode/1 0f3823bc2476b05a", "10.0.0.9", NULL },
        { "", "10.0.0.9", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        uint8_t id [8];
        char endpoint [GC_DISCOVERY_ENDPOINT_MAX + 1] = "";
        int rc = gc_discovery_parse ((const uint8_t *) cases [i].beacon, strlen (cases [i].beacon),
                                     cases [i].source, id, endpoint);
        if (cases [i].endpoint) {
            if (rc != 0 || strcmp (endpoint, cases [i].endpoint))
                fail_msg ("case %zu '%s': rc %d endpoint '%s'", i, cases [i].beacon, rc, endpoint);
            assert_int_equal (id [0], 0x0f);
            assert_int_equal (id [7], 0x5a);
        }
        else
        if (rc == 0)
            fail_msg ("case %zu accepted: '%s'", i, cases [i].beacon);
    }
}

//  Embedded NULs and overlong beacons, read only within the given size.
static void
test_parse_bounds (void **state)
{
    uint8_t id [8];
    char endpoint [GC_DISCOVERY_ENDPOINT_MAX + 1];
    const char with_nul [] = "gcnode/1 0f3823bc2476b05a tcp://10.0.0.2:7100\0:8";
    assert_int_equal (gc_discovery_parse ((const uint8_t *) with_nul, sizeof with_nul - 1, "10.0.0.9",
                                          id, endpoint), -1);
    char big [400];
    memset (big, 'a', sizeof big);
    memcpy (big, "gcnode/1 0f3823bc2476b05a tcp://", 32);
    memcpy (big + sizeof big - 5, ":7100", 5);
    assert_int_equal (gc_discovery_parse ((const uint8_t *) big, sizeof big, "10.0.0.9", id, endpoint), -1);
    //  Every prefix of a good beacon but the whole is refused.
    const char *good = "gcnode/1 0f3823bc2476b05a tcp://10.0.0.2:7100";
    for (size_t len = 0; len < strlen (good) - 4; len++)
        assert_int_equal (gc_discovery_parse ((const uint8_t *) good, len, "10.0.0.9", id, endpoint), -1);
    assert_int_equal (gc_discovery_parse (NULL, 10, "10.0.0.9", id, endpoint), -1);
}

//  Configuration mistakes are refused before anything starts.
static void
test_config_checks (void **state)
{
    static const uint8_t self_id [8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    gc_err_t err = { 0 };
    gc_discovery_config_t bad [] = {
        { .port = 0, .interval_ms = 1000, .announce = "tcp://*:7100", .self_id = self_id },
        { .port = 7099, .interval_ms = 1, .announce = "tcp://*:7100", .self_id = self_id },
        { .port = 7099, .interval_ms = 1000, .announce = "discover", .self_id = self_id },
        { .port = 7099, .interval_ms = 1000, .announce = NULL, .self_id = self_id },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        gc_discovery_t *d = gc_discovery_new (&bad [i], &err);
        assert_null (d);
        assert_true (strlen (err.msg) > 0);
    }
    gc_discovery_config_t ok = { .port = 7099, .interval_ms = 1000, .announce = "tcp://*:7100",
                                 .self_id = self_id };
    gc_discovery_t *d = gc_discovery_new (&ok, &err);
    assert_non_null (d);
    char endpoint [64];
    assert_int_equal (gc_discovery_want (d, 3, self_id, &err), 0);
    assert_false (gc_discovery_endpoint (d, 3, endpoint, sizeof endpoint));
    gc_discovery_destroy (&d);
    assert_null (d);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_parse_table),
        cmocka_unit_test (test_parse_bounds),
        cmocka_unit_test (test_config_checks),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
