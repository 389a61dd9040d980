// sdf_ref: load one SDFormat file with libsdformat (sdf::Root::Load) and print, as one JSON
// object on stdout, its errors and the world pose of every model, link, joint and frame.
//
//   sdf_ref FILE [SEARCH_DIR ...]
//
// {"version": "1.9", "errors": [{"code": 5, "message": "..."}],
//  "entities": [{"kind": "link", "name": "robot::base", "position": [x,y,z],
//                "quaternion": [x,y,z,w]}, ...]}
//
// Only the first world is listed (the project reads the first <world> of a file).
// Names are scoped from each top-level model with "::" (as `robot-state-format frames --json`);
// world-level frames carry their plain name. Poses are resolved with SemanticPose::Resolve
// relative to the enclosing model frame ("__model__") and composed with that model's world pose.
// Exit status: 0 loaded without errors, 1 errors, 2 usage.
#include <sdf/sdf.hh>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using ignition::math::Pose3d;

namespace {

std::string Escape(const std::string &s) {
  std::ostringstream o;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o << '\\' << c;
    } else if (c < 0x20) {
      o << "\\u" << std::hex << std::setw(4) << std::setfill('0') << static_cast<int>(c) << std::dec;
    } else {
      o << c;
    }
  }
  return o.str();
}

struct Entity {
  std::string kind;
  std::string name;
  Pose3d pose;
  bool ok;
};

std::vector<Entity> entities;
std::vector<std::string> resolveErrors;

void Note(const sdf::Errors &errs, const std::string &what) {
  for (const auto &e : errs) {
    resolveErrors.push_back(what + ": " + e.Message());
  }
}

Pose3d Resolve(const sdf::SemanticPose &sp, const std::string &to, const std::string &what, bool *ok) {
  Pose3d p;
  sdf::Errors errs = sp.Resolve(p, to);
  if (!errs.empty()) {
    *ok = false;
    Note(errs, what);
  }
  return p;
}

void Walk(const sdf::Model *m, const std::string &scope, const Pose3d &X_WM) {
  const std::string pre = scope + "::";
  for (uint64_t i = 0; i < m->LinkCount(); ++i) {
    const sdf::Link *l = m->LinkByIndex(i);
    bool ok = true;
    Pose3d X_ML = Resolve(l->SemanticPose(), "__model__", pre + l->Name(), &ok);
    entities.push_back({"link", pre + l->Name(), X_WM * X_ML, ok});
  }
  for (uint64_t i = 0; i < m->JointCount(); ++i) {
    const sdf::Joint *j = m->JointByIndex(i);
    bool ok = true;
    Pose3d X_MJ = Resolve(j->SemanticPose(), "__model__", pre + j->Name(), &ok);
    entities.push_back({"joint", pre + j->Name(), X_WM * X_MJ, ok});
  }
  for (uint64_t i = 0; i < m->FrameCount(); ++i) {
    const sdf::Frame *f = m->FrameByIndex(i);
    bool ok = true;
    Pose3d X_MF = Resolve(f->SemanticPose(), "__model__", pre + f->Name(), &ok);
    entities.push_back({"frame", pre + f->Name(), X_WM * X_MF, ok});
  }
  for (uint64_t i = 0; i < m->ModelCount(); ++i) {
    const sdf::Model *n = m->ModelByIndex(i);
    bool ok = true;
    Pose3d X_MN = Resolve(n->SemanticPose(), "__model__", pre + n->Name(), &ok);
    Pose3d X_WN = X_WM * X_MN;
    entities.push_back({"model", pre + n->Name(), X_WN, ok});
    Walk(n, pre + n->Name(), X_WN);
  }
}

void Vec(std::ostream &o, double a, double b, double c) {
  o << "[" << a << ", " << b << ", " << c << "]";
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: sdf_ref FILE [SEARCH_DIR ...]\n";
    return 2;
  }
  sdf::Console::Instance()->SetQuiet(true);
  sdf::ParserConfig config;
  std::vector<std::string> dirs;
  for (int i = 2; i < argc; ++i) {
    config.AddURIPath("model://", argv[i]);
    dirs.push_back(argv[i]);
  }
  // URIs libsdformat 12 does not find itself (relative paths such as "models/arm") are looked up
  // in the search directories, as robot_state_format looks them up next to the including file.
  config.SetFindCallback([dirs](const std::string &uri) -> std::string {
    std::string rel = uri;
    const std::string scheme = "model://";
    if (rel.rfind(scheme, 0) == 0) {
      rel = rel.substr(scheme.size());
    }
    for (const auto &d : dirs) {
      const std::string candidate = d + "/" + rel;
      if (sdf::filesystem::exists(candidate)) {
        return candidate;
      }
    }
    return "";
  });
  sdf::Root root;
  sdf::Errors errors = root.Load(argv[1], config);

  if (errors.empty()) {
    if (const sdf::Model *m = root.Model()) {
      bool ok = true;
      // A model file's model frame in the world: its <pose> (placement_frame applied).
      Pose3d X_WM = Resolve(m->SemanticPose(), "", m->Name(), &ok);
      entities.push_back({"model", m->Name(), X_WM, ok});
      Walk(m, m->Name(), X_WM);
    }
    // only the first world: robot_state_format reads the first <world> of a file (SDF_EXTRA_WORLD)
    for (uint64_t w = 0; w < root.WorldCount() && w < 1; ++w) {
      const sdf::World *world = root.WorldByIndex(w);
      for (uint64_t i = 0; i < world->ModelCount(); ++i) {
        const sdf::Model *m = world->ModelByIndex(i);
        bool ok = true;
        Pose3d X_WM = Resolve(m->SemanticPose(), "world", m->Name(), &ok);
        entities.push_back({"model", m->Name(), X_WM, ok});
        Walk(m, m->Name(), X_WM);
      }
      for (uint64_t i = 0; i < world->FrameCount(); ++i) {
        const sdf::Frame *f = world->FrameByIndex(i);
        bool ok = true;
        Pose3d X_WF = Resolve(f->SemanticPose(), "world", f->Name(), &ok);
        entities.push_back({"frame", f->Name(), X_WF, ok});
      }
    }
  }

  std::ostringstream o;
  o << std::setprecision(17);
  o << "{\"version\": \"" << Escape(root.Version()) << "\", \"worlds\": " << root.WorldCount()
    << ", \"errors\": [";
  for (size_t i = 0; i < errors.size(); ++i) {
    o << (i ? ", " : "") << "{\"code\": " << static_cast<int>(errors[i].Code())
      << ", \"message\": \"" << Escape(errors[i].Message()) << "\"}";
  }
  o << "], \"resolve_errors\": [";
  for (size_t i = 0; i < resolveErrors.size(); ++i) {
    o << (i ? ", " : "") << "\"" << Escape(resolveErrors[i]) << "\"";
  }
  o << "], \"entities\": [";
  for (size_t i = 0; i < entities.size(); ++i) {
    const Entity &e = entities[i];
    const auto &p = e.pose.Pos();
    const auto &q = e.pose.Rot();
    o << (i ? ",\n " : "") << "{\"kind\": \"" << e.kind << "\", \"name\": \"" << Escape(e.name)
      << "\", \"resolved\": " << (e.ok ? "true" : "false") << ", \"position\": ";
    Vec(o, p.X(), p.Y(), p.Z());
    o << ", \"quaternion\": [" << q.X() << ", " << q.Y() << ", " << q.Z() << ", " << q.W() << "]}";
  }
  o << "]}\n";
  std::cout << o.str();
  return errors.empty() ? 0 : 1;
}
