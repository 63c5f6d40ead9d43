/* tests/engine/fk_device.h — the fake device "fk0" of the engine tests:
 * the sw backend standing in for the verbs module, so a test can change
 * the queue pairs' ops (fk_ops) to inject what the sw device never does. */
#ifndef DOCA_TESTS_ENGINE_FK_DEVICE_H
#define DOCA_TESTS_ENGINE_FK_DEVICE_H

#include "hw/hw.h"

/* The ops of fk0's queue pairs: hw_sw_ops after fk_install, changed by
 * the test before the contexts start (a queue pair reads them as it runs). */
extern struct hw_ops fk_ops;

/* Reset fk_ops to the sw backend's and make fk0 the verbs module's device. */
void fk_install(void);

#endif /* DOCA_TESTS_ENGINE_FK_DEVICE_H */
