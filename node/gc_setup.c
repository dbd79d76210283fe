#include "gc_setup.h"

#include <pthread.h>
#include <string.h>

int
gc_setup_engine (const gc_config_t *cfg, const gc_setup_parts_t *parts, gc_engine_config_t *ec,
                 gc_err_t *err)
{
    memset (ec, 0, sizeof *ec);
    ec->self = cfg->index >= 0 ? (uint32_t) cfg->index : 0;
    if (parts) {
        ec->topology = parts->topology;
        ec->key = parts->key;
        ec->trust = parts->trust;
        ec->peer_ids = parts->peer_ids;
        ec->train = parts->train;
        ec->test = parts->test;
    }
    ec->network = cfg->network;
    ec->model = cfg->model;
    //  the schedule parameters no key sets (step period and factor) are the
    //  optimiser's own
    gc_optim_config_defaults (&ec->optim);
    ec->optim.lr = cfg->lr;
    ec->optim.momentum = cfg->momentum;
    ec->optim.nesterov = cfg->nesterov;
    ec->optim.weight_decay = cfg->weight_decay;
    ec->optim.warmup = cfg->warmup;
    ec->optim.label_smoothing = cfg->label_smoothing;
    if (gc_optim_check_label_smoothing (cfg->label_smoothing, "train/label_smoothing", err))
        return -1;
    if (gc_optim_schedule_parse (cfg->schedule, &ec->optim, err))
        return gc_err_prefix (err, "train/schedule: ");
    if (gc_augment_parse (cfg->augment, &ec->augment, err))
        return gc_err_prefix (err, "train/augment: ");
    ec->batch = (size_t) cfg->batch;
    ec->local_steps = (uint32_t) cfg->local_steps;
    ec->rounds = (uint64_t) cfg->rounds;
    ec->seed = cfg->seed;
    ec->compress = cfg->compress;
    ec->ec = cfg->ec;
    ec->policy = cfg->policy;
    ec->aggregator = cfg->aggregator;
    ec->validate = cfg->validate;
    ec->fallback = cfg->fallback != 0;
    ec->witness = cfg->witness != 0;
    ec->wait = cfg->wait;
    ec->gamma = cfg->gamma;
    ec->keep_unsent = cfg->keep_unsent;
    ec->staleness = (uint32_t) cfg->staleness;
    ec->keyframe_every = (uint32_t) cfg->keyframe_every;
    ec->keyframe_fp16 = cfg->keyframe_fp16;
    ec->wait_timeout_ns = cfg->timeout_ms * 1000000LL;
    ec->keyframe_interval_ns = cfg->keyframe_interval_ms * 1000000LL;
    ec->mute_after = (uint32_t) cfg->mute_after;
    ec->mute_for_ns = cfg->mute_for_s * 1000000000LL;
    ec->attack = strcmp (cfg->role, "byzantine") ? NULL : cfg->attack;
    return 0;
}

//  The defaults of every key, made once and kept for the process: the
//  engine's defaults point into it.
static gc_config_t   *s_defaults;
static pthread_once_t s_defaults_once = PTHREAD_ONCE_INIT;

static void
s_make_defaults (void)
{
    s_defaults = gc_config_new ();
}

void
gc_engine_config_defaults (gc_engine_config_t *ec)
{
    pthread_once (&s_defaults_once, s_make_defaults);
    if (!s_defaults || gc_setup_engine (s_defaults, NULL, ec, NULL))
        memset (ec, 0, sizeof *ec);     /* out of memory: no defaults at all, as the engine refuses */
}

int
gc_setup_data (const gc_config_t *cfg, gc_dataset_t *train, gc_dataset_t *test, bool *fell_back,
               gc_err_t *err)
{
    if (gc_dataset_open (*cfg->data ? cfg->data : NULL, cfg->seed, train, test, fell_back, err))
        return gc_err_prefix (err, "train/data: ");
    if (cfg->train_samples > 0 && (size_t) cfg->train_samples < train->n)
        train->n = (size_t) cfg->train_samples;
    if (cfg->test_samples > 0 && (size_t) cfg->test_samples < test->n)
        test->n = (size_t) cfg->test_samples;
    gc_dataset_standardise (train, test);
    return 0;
}
