/* See LICENSE file for copyright and license details. */
/*
 * corral.h is the index of libcorral's headers, one per area of src/, in
 * the order the data flows: a population is cut into slices (plan), each
 * agent checks out its clone (checkout) and runs its slice (agent),
 * writing records (record), which one merge gathers (merge) and the
 * reports read (report); the repair half (repair) and corral checking
 * itself (selftest) sit beside the pipeline.  Tools
 * include just this; the library's own files include the areas they use.
 */
#ifndef CORRAL_H
#define CORRAL_H

#include "base/base.h"
#include "record/record.h"
#include "plan/plan.h"
#include "checkout/checkout.h"
#include "agent/agent.h"
#include "merge/merge.h"
#include "report/report.h"
#include "engine/engine.h"
#include "repair/repair.h"
#include "selftest/selftest.h"

#endif /* CORRAL_H */
