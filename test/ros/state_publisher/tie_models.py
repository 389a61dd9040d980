"""A URDF whose quaternion signs KDL decides by rounding (ties of two diagonal elements), from real robots.

``cam``: go1's ``camera_joint_chin`` origin (half a turn about ``(1, 0, -1)``: two diagonal elements 0).
``a``: tiago_dual's ``arm_left_4_joint`` origin and axis (two diagonal elements equal at every angle).
``b``: a mimic follower of ``a`` on a quarter-turned origin, ``p``: a prismatic joint on go1's origin.
"""

LIM = '<limit lower="-0.39269908169872414" upper="2.356194490192345" effort="1" velocity="1"/>'
TIES = f"""<robot name="ties">
 <link name="base"/><link name="cam"/><link name="a"/><link name="b"/><link name="c"/><link name="p"/>
 <joint name="cam_joint" type="fixed"><parent link="base"/><child link="cam"/>
   <origin rpy="3.141592653589793 1.5707963267948966 0" xyz="0.2522 0.0125 -0.0436"/></joint>
 <joint name="ja" type="revolute"><parent link="base"/><child link="a"/>
   <origin rpy="1.5707963267948966 -1.5707963267948966 0.0" xyz="-0.02 -0.027 0.222"/><axis xyz="0 0 1"/>{LIM}</joint>
 <joint name="jb" type="revolute"><parent link="a"/><child link="b"/><origin rpy="1.5707963267948966 0 0"/>
   <axis xyz="0 1 0"/><mimic joint="ja" multiplier="-1" offset="0.5"/>
   <limit lower="-4" upper="4" effort="1" velocity="1"/></joint>
 <joint name="jc" type="continuous"><parent link="b"/><child link="c"/>
   <origin rpy="0 1.5707963267948966 3.141592653589793"/><axis xyz="1 0 0"/></joint>
 <joint name="jp" type="prismatic"><parent link="c"/><child link="p"/>
   <origin rpy="3.141592653589793 1.5707963267948966 0"/><axis xyz="0 0 1"/>
   <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""
