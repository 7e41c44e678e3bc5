import { Module } from '@nestjs/common';
import { JournalController } from './journal.controller';

/** The payments journal's routes; `PaymentsReconciler` comes from the global `PaymentsModule`. */
@Module({ controllers: [JournalController] })
export class JournalModule {}
