/* Force-included before the uWebSockets.js addon sources (binding.gyp, -include).
 *
 * The addon reads its native pointer from `args.Holder()`. V8 13 (Node 24) removed
 * FunctionCallbackInfo::Holder(); upstream uWebSockets.js moved to `args.This()`, which is
 * the same object for these functions (their templates have no receiver signature, so V8
 * never looks up a different holder). v8.h is included first, so only the addon's own uses
 * are renamed, on every Node version alike. */
#include <v8.h>
#define Holder This
