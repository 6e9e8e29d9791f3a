// all.hpp — the paper's application workloads (Negele et al. 2017, section 5, Table 1 and
// Fig. 10), in the order of Table 1; matrix (Fig. 10) last.
#pragma once

#include "harness/typelist.hpp"
#include "workloads/apps/city.hpp"
#include "workloads/apps/eratosthenes.hpp"
#include "workloads/apps/mandelbrot.hpp"
#include "workloads/apps/matrix.hpp"
#include "workloads/apps/news.hpp"
#include "workloads/apps/producer.hpp"
#include "workloads/apps/tokenring.hpp"

namespace coopbench {

using AppWorkloads = TypeList<City, Eratosthenes, Mandelbrot, News, Producer, TokenRing, Matrix>;

}  // namespace coopbench
